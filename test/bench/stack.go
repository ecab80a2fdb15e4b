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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// adminConfig is the stack admin's client configuration for a server.
func adminConfig(localDir, host, caFile string) *rest.Config {
	pki := filepath.Join(localDir, "pki")
	return &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile:   filepath.Join(pki, caFile),
			CertFile: filepath.Join(pki, "admin.crt"),
			KeyFile:  filepath.Join(pki, "admin.key"),
		},
		QPS: 50, Burst: 100,
		Timeout: 2 * time.Minute,
	}
}

// benchCRD is the CRD file read as unstructured, with what the benchmark needs of it.
type benchCRD struct {
	object *unstructured.Unstructured
	gvr    schema.GroupVersionResource
	kind   string
}

func readCRD(file string) (*benchCRD, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the benchmark CRD: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if u.GetKind() != "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s holds a %q, not a CustomResourceDefinition", file, u.GetKind())
	}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	var version string
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["storage"] == true {
			version, _ = m["name"].(string)
		}
	}
	if group == "" || plural == "" || kind == "" || version == "" {
		return nil, fmt.Errorf("%s: group, plural, kind or storage version missing", file)
	}
	return &benchCRD{object: u, gvr: schema.GroupVersionResource{Group: group, Version: version, Resource: plural}, kind: kind}, nil
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// install creates the CRD and waits until it is Established and its group is served.
func (c *benchCRD) install(ctx context.Context, cfg *rest.Config) error {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := client.Resource(crdResource).Create(ctx, c.object, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the benchmark CRD: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := client.Resource(crdResource).Get(ctx, c.object.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conditions {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				if _, err := disco.ServerResourcesForGroupVersion(c.gvr.GroupVersion().String()); err == nil {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the benchmark CRD %s was not established within a minute", c.object.GetName())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createNamespaces creates each target's namespace in kube-apiserver, which our
// apiserver's namespace admission consults too.
func createNamespaces(ctx context.Context, cfg *rest.Config, targets []*Target) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, t := range targets {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.Namespace}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// stopController stops our controller when the stack started it (a local-up.sh without
// the START_CONTROLLER=false switch): it would reconcile every benchmark object. It is
// this stack's process, stopped by its recorded PID.
func stopController(localDir string, logf func(string, ...any)) error {
	data, err := os.ReadFile(filepath.Join(localDir, "pids", "nginx-operator-controller.pid"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return nil // already gone
	}
	for range 60 {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	logf("stopped the stack's controller (pid %d): the API scenarios run without it", pid)
	return nil
}

// versions asks each server for its version.
func versions(ctx context.Context, localDir string, ports map[string]int) map[string]string {
	out := map[string]string{}
	for name, cfg := range map[string]*rest.Config{
		kubeAPIServer:     adminConfig(localDir, fmt.Sprintf("https://127.0.0.1:%d", ports["KUBE_APISERVER_PORT"]), "ca.crt"),
		operatorAPIServer: adminConfig(localDir, fmt.Sprintf("https://127.0.0.1:%d", ports["OPERATOR_APISERVER_PORT"]), "nginx-operator-ca.crt"),
	} {
		disco, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			continue
		}
		if info, err := disco.ServerVersion(); err == nil {
			out[name] = info.GitVersion
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/version", ports["ETCD_PORT"]), nil)
	if err == nil {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			defer resp.Body.Close()
			var v struct {
				Server string `json:"etcdserver"`
			}
			if body, err := io.ReadAll(resp.Body); err == nil && json.Unmarshal(body, &v) == nil {
				out[etcdServer] = v.Server
			}
		}
	}
	return out
}
