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

// Package deploy tests the deployment path for real: a local control plane with this
// machine as a real node (kubelet, containerd, kube-proxy), nginx-operator deployed onto
// it from artifacts/deploy as real pods, and real nginx pods serving traffic. It needs
// root; without root TestMain says so and runs nothing. One test per step of the path
// (deploy_test.go lists them), each runnable alone: what they share is brought up by the
// first that needs it (fixture_test.go).
package deploy

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

var (
	stack *framework.Stack
	kc    framework.Kubectl
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	flag.Parse() // prefetch reads -run and -skip
	if os.Getuid() != 0 {
		fmt.Println("test/deploy needs root (a real node runs kubelet, containerd and kube-proxy); not running it")
		return 0
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// kube-controller-manager's HorizontalPodAutoscaler sync shortened from 15s: the
	// autoscaling test waits for the HPA to read CPU, scale up and scale back down.
	if stack, err = framework.NewStack(root, "nginx-operator-deploy-", "NODE=real",
		"KUBE_CONTROLLER_MANAGER_EXTRA_FLAGS=--horizontal-pod-autoscaler-sync-period=5s"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kc = framework.Kubectl{Kubeconfig: stack.Kubeconfig()}
	before := snapshotHost()
	defer func() {
		out, err := stack.Down(3 * time.Minute)
		fmt.Print(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if left := snapshotHost().leftoversSince(before, stack.LocalDir); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "the real node left things behind after local-down:\n  %s\n", strings.Join(left, "\n  "))
			code = 1
		} else {
			fmt.Println("after local-down nothing of the node is left: processes, mounts, network namespaces, iptables chains, bridge, route, sysctls, directories")
		}
	}()
	start := time.Now()
	if err := stack.Up(3, 20*time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stack.DumpLogs(30)
		return 1
	}
	fmt.Printf("local control plane with a real node up in %s (state in %s)\n", time.Since(start).Round(time.Second), stack.LocalDir)
	// local-up may first have torn down a node abandoned by a killed run, restoring the
	// settings that node changed: what this node must give back is what it found.
	before.sysctls = before.withSavedSysctls(filepath.Join(stack.LocalDir, "node"))
	prefetch()
	defer finishBuilds() // before local-down: a build imports into the node's containerd
	return m.Run()
}
