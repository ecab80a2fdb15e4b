/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// The real-node suite runs etcdctl in the etcd pods dozens of times per make test, where
// kubectl is not the subject. execRequest answers `exec [-n NS] POD -c CONTAINER --
// COMMAND...` (with --as and --as-group) in process as kubectl does: the pod read first,
// the command's output streamed over a WebSocket (SPDY where the server cannot upgrade
// to one), and a command that fails told as "command terminated with exit code N". Input,
// terminals and a container the pod does not have are kubectl's own.
type execRequest struct {
	namespace, pod, container string
	as                        string
	asGroups                  []string
	command                   []string
}

// parseExec returns the request args make, or false when kubectl itself must answer them.
func parseExec(args []string) (execRequest, bool) {
	var r execRequest
	dash := slices.Index(args, "--")
	if dash < 0 || dash == len(args)-1 {
		return r, false
	}
	positional, ok := scanArgs(args[:dash], func(string) bool { return false }, []valueFlag{
		{names: []string{"-n", "--namespace"}, into: &r.namespace},
		{names: []string{"-c", "--container"}, into: &r.container},
		{names: []string{"--as"}, into: &r.as},
		{names: []string{"--as-group"}, list: &r.asGroups},
	})
	if !ok || len(positional) != 2 || positional[0] != "exec" || r.container == "" || strings.Contains(positional[1], "/") {
		return r, false
	}
	r.pod, r.command = positional[1], args[dash+1:]
	return r, true
}

// errExitCode is the exit status kubectl exec gives for a command that failed: the
// command's own.
type errExitCode int

func (e errExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// execIn answers args in process within limit when it can.
func (k Kubectl) execIn(limit time.Duration, stdin string, args []string) (stdout, stderr string, err error) {
	r, ok := parseExec(args)
	if !ok || stdin != "" || k.Binary != "" || k.AlwaysRun {
		return "", "", errKubectlMustAnswer
	}
	c, err := clientsFor(k.Kubeconfig, r.as, r.asGroups)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	if r.namespace == "" {
		r.namespace = c.namespace
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return execInPod(ctx, c, r)
}

func execInPod(ctx context.Context, c *getClients, r execRequest) (stdout, stderr string, err error) {
	client, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	pod, err := client.CoreV1().Pods(r.namespace).Get(ctx, r.pod, metav1.GetOptions{})
	if err != nil {
		return "", errorLine(err), err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		err := fmt.Errorf("cannot exec into a container in a completed pod; current phase is %s", pod.Status.Phase)
		return "", errorLine(err), err
	}
	if !slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == r.container }) {
		return "", "", errKubectlMustAnswer
	}
	req := client.CoreV1().RESTClient().Post().Resource("pods").Name(pod.Name).Namespace(pod.Namespace).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: r.container, Command: r.command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(c.config, "POST", req.URL())
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	websocket, err := remotecommand.NewWebSocketExecutor(c.config, "GET", req.URL().String())
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	executor, err := remotecommand.NewFallbackExecutor(websocket, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	var out, errOut bytes.Buffer
	err = executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	var exit utilexec.ExitError
	if errors.As(err, &exit) {
		fmt.Fprintln(&errOut, exit.Error())
		return out.String(), errOut.String(), errExitCode(exit.ExitStatus())
	}
	if err != nil {
		errOut.WriteString(errorLine(err))
	}
	return out.String(), errOut.String(), err
}
