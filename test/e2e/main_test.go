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
	// Always stop what was started, even when start-up fails half way.
	defer func() {
		if out, err := script("local-down.sh", time.Minute); err != nil {
			fmt.Fprintf(os.Stderr, "local-down: %v\n%s\n", err, out)
		}
	}()
	start := time.Now()
	if err := startStack(3); err != nil {
		fmt.Fprintln(os.Stderr, err)
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

// stackPorts are the ports of the local stack, each set through the environment variable
// of the same name that hack/lib-local.sh reads.
var stackPorts = []string{"ETCD_PORT", "ETCD_PEER_PORT", "KUBE_APISERVER_PORT", "KCM_PORT", "SCHEDULER_PORT", "KWOK_PORT", "OPERATOR_APISERVER_PORT", "CONTROLLER_METRICS_PORT", "CONTROLLER_PROBE_PORT"}

// startStack runs hack/local-up.sh on free ports. A port found free can be taken by
// another process (the integration suite runs in parallel) before a component binds it,
// so a start that failed on a bind error is retried on new ports.
func startStack(attempts int) error {
	for attempt := 1; ; attempt++ {
		env = append(os.Environ(), "LOCAL_DIR="+localDir)
		for _, name := range stackPorts {
			port, err := freePort()
			if err != nil {
				return err
			}
			ports[name] = port
			env = append(env, fmt.Sprintf("%s=%d", name, port))
		}
		out, err := script("local-up.sh", 10*time.Minute)
		if err == nil {
			return nil
		}
		if attempt == attempts || !logsMention("address already in use") {
			return fmt.Errorf("local-up failed: %v\n%s", err, out)
		}
		fmt.Printf("local-up attempt %d lost a port to another process; retrying on new ports\n", attempt)
	}
}

// logsMention reports whether any component log of the stack contains text.
func logsMention(text string) bool {
	logs, _ := filepath.Glob(filepath.Join(localDir, "logs", "*.log"))
	for _, f := range logs {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), text) {
			return true
		}
	}
	return false
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
