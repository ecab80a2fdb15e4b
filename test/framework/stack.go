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

// Package framework runs a private local control plane for the end-to-end suites with
// the project's own scripts (hack/local-up.sh, hack/local-down.sh) and drives it with
// /usr/bin/kubectl.
package framework

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Stack is one private local control plane: a state directory and free ports, passed to
// the scripts through the environment variables hack/lib-local.sh reads.
type Stack struct {
	RepoRoot string
	LocalDir string
	// Ports maps each port variable (ETCD_PORT, ...) to the port in use.
	Ports map[string]int
	// Extra environment for the scripts, such as NODE=real.
	Extra []string
	env   []string
}

// NewStack prepares a stack in a new temporary directory; nothing runs yet.
func NewStack(repoRoot, prefix string, extra ...string) (*Stack, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	s := &Stack{RepoRoot: repoRoot, LocalDir: dir, Ports: map[string]int{}, Extra: extra}
	s.env = s.environ()
	return s, nil
}

func (s *Stack) environ() []string {
	env := append(os.Environ(), "LOCAL_DIR="+s.LocalDir)
	env = append(env, s.Extra...)
	for name, port := range s.Ports {
		env = append(env, fmt.Sprintf("%s=%d", name, port))
	}
	return env
}

// Kind is the kind of stack the scripts start: a real node when NODE=real is among Extra.
func (s *Stack) Kind() StackKind {
	if slices.Contains(s.Extra, "NODE=real") {
		return RealStack
	}
	return KwokStack
}

// Up runs hack/local-up.sh with every port variable of the stack (hack/stack.txt) set to a
// free port. A port found free can be taken by another process (the suites run in
// parallel) before a component binds it, so a start that failed on a bind error is retried
// on new ports.
func (s *Stack) Up(attempts int, timeout time.Duration) error {
	portVars, err := PortVars(s.RepoRoot, s.Kind())
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		for _, name := range portVars {
			port, err := FreePort()
			if err != nil {
				return err
			}
			s.Ports[name] = port
		}
		s.env = s.environ()
		out, err := s.Script("local-up.sh", timeout)
		if err == nil {
			return nil
		}
		if attempt == attempts || !s.LogsMention("address already in use") {
			return fmt.Errorf("local-up failed: %v\n%s", err, out)
		}
		fmt.Printf("local-up attempt %d lost a port to another process; retrying on new ports\n", attempt)
	}
}

// Down runs hack/local-down.sh, which stops the stack by PID and removes its directory,
// and returns what it printed.
func (s *Stack) Down(timeout time.Duration) (string, error) {
	out, err := s.Script("local-down.sh", timeout)
	if err != nil {
		return out, fmt.Errorf("local-down: %v\n%s", err, out)
	}
	return out, nil
}

// Script runs a script of hack/ against this stack.
func (s *Stack) Script(name string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.RepoRoot, "hack", name), args...)
	cmd.Env = s.env
	cmd.Dir = s.RepoRoot
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Env is the environment the scripts of this stack run with.
func (s *Stack) Env() []string { return s.env }

// Kubeconfig is the admin kubeconfig of the stack.
func (s *Stack) Kubeconfig() string { return filepath.Join(s.LocalDir, "kubeconfig") }

// LogsMention reports whether any component log contains text.
func (s *Stack) LogsMention(text string) bool {
	logs, _ := filepath.Glob(filepath.Join(s.LocalDir, "logs", "*.log"))
	for _, f := range logs {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), text) {
			return true
		}
	}
	return false
}

// DumpLogs prints the last lines of every component log to standard error.
func (s *Stack) DumpLogs(lines int) {
	logs, _ := filepath.Glob(filepath.Join(s.LocalDir, "logs", "*.log"))
	for _, f := range logs {
		data, _ := os.ReadFile(f)
		all := strings.Split(string(data), "\n")
		if len(all) > lines {
			all = all[len(all)-lines:]
		}
		fmt.Fprintf(os.Stderr, "==== %s (last lines)\n%s\n", f, strings.Join(all, "\n"))
	}
}

// FreePort returns a loopback port that was free a moment ago. A process started on it
// may find it taken meanwhile: callers retry on another.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// MustFreePort is FreePort that fails the test when no port can be had.
func MustFreePort(t testing.TB) int {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
