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
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	repoRoot string
	localDir string
	env      []string
	ports    = map[string]int{}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if repoRoot, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if localDir, err = os.MkdirTemp("", "nginx-operator-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env = append(os.Environ(), "LOCAL_DIR="+localDir)
	for _, name := range []string{"ETCD_PORT", "ETCD_PEER_PORT", "KUBE_APISERVER_PORT", "KCM_PORT", "SCHEDULER_PORT", "KWOK_PORT", "OPERATOR_APISERVER_PORT", "CONTROLLER_METRICS_PORT", "CONTROLLER_PROBE_PORT"} {
		port, err := freePort()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ports[name] = port
		env = append(env, fmt.Sprintf("%s=%d", name, port))
	}
	// Always stop what was started, even when start-up fails half way.
	defer func() {
		if out, err := script("local-down.sh", time.Minute); err != nil {
			fmt.Fprintf(os.Stderr, "local-down: %v\n%s\n", err, out)
		}
	}()
	start := time.Now()
	if out, err := script("local-up.sh", 10*time.Minute); err != nil {
		fmt.Fprintf(os.Stderr, "local-up failed: %v\n%s\n", err, out)
		dumpLogs()
		return 1
	}
	fmt.Printf("local control plane up in %s (state in %s)\n", time.Since(start).Round(time.Second), localDir)
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	return code
}

func script(name string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "hack", name))
	cmd.Env = env
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(localDir, "logs", "*.log"))
	for _, f := range logs {
		data, _ := os.ReadFile(f)
		lines := strings.Split(string(data), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(os.Stderr, "==== %s (last lines)\n%s\n", f, strings.Join(lines, "\n"))
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func adminKubeconfig() string    { return filepath.Join(localDir, "kubeconfig") }
func pkiFile(name string) string { return filepath.Join(localDir, "pki", name) }

// kubectl runs the machine's kubectl against the local kube-apiserver.
func kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", adminKubeconfig()}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// mustKubectl fails the test when kubectl fails and returns its standard output.
func mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := kubectl(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}
