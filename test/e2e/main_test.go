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

// Package e2e tests the product the way users meet it: a real kube-apiserver with
// kube-controller-manager, kube-scheduler and kwok, our apiserver registered through
// APIServices, driven with /usr/bin/kubectl and Go clients. TestMain starts a private
// stack with hack/local-up.sh on free loopback ports and stops it by PID afterwards.
//
// Tests that only wait on objects of their own (their own names or namespace; admission
// configuration scoped to their namespace; counters filtered to their objects) call
// t.Parallel() first: they run side by side once every other test has finished. Tests
// that stop or reconfigure a component, change what other tests rely on cluster-wide, or
// read counters every test moves stay sequential.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// maxRetryDelay is the controller's --max-retry-delay in this suite.
const maxRetryDelay = 5 * time.Second

var (
	stack    *framework.Stack
	repoRoot string
	localDir string
	// ports are the stack's ports by variable name; tests that move a component
	// (failover) update them.
	ports = map[string]int{}
	kc    framework.Kubectl
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The controller's longest retry delay (a minute by default) shortened, so that the tests
	// of refused children see it back off and recover in seconds. kube-controller-manager's
	// full quota recount (5 minutes by default) shortened too: on a fresh stack its quota
	// controller may meet a new ResourceQuota before it has discovered nginxoperators, and
	// then counts them only at the next recount.
	if stack, err = framework.NewStack(root, "nginx-operator-e2e-",
		"CONTROLLER_EXTRA_FLAGS=--max-retry-delay="+maxRetryDelay.String(),
		"KUBE_CONTROLLER_MANAGER_EXTRA_FLAGS=--resource-quota-sync-period=15s"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot, localDir = stack.RepoRoot, stack.LocalDir
	kc = framework.Kubectl{Kubeconfig: stack.Kubeconfig()}
	// Always stop what was started, even when start-up fails half way.
	defer func() {
		if _, err := stack.Down(time.Minute); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	start := time.Now()
	if err := stack.Up(3, 10*time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stack.DumpLogs(40)
		return 1
	}
	ports = stack.Ports
	fmt.Printf("local control plane up in %s (state in %s)\n", time.Since(start).Round(time.Second), localDir)
	if err := startLongevityWatch(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the longevity watch:", err)
		stack.DumpLogs(40)
		return 1
	}
	if code = m.Run(); code != 0 {
		stack.DumpLogs(40)
	}
	return code
}

func adminKubeconfig() string    { return stack.Kubeconfig() }
func pkiFile(name string) string { return filepath.Join(localDir, "pki", name) }

// kubectl runs the machine's kubectl against the local kube-apiserver.
func kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return kc.Run(t, stdin, args...)
}

// mustKubectl fails the test when kubectl fails and returns its standard output.
func mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	return kc.Must(t, stdin, args...)
}
