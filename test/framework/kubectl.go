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
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Kubectl runs the machine's kubectl with a kubeconfig, answering the reads and common
// writes a client-go call answers the same in this process instead (kubectlget.go,
// kubectlwrite.go).
type Kubectl struct {
	Kubeconfig string
	// Binary is the kubectl to run; empty means the machine's, /usr/bin/kubectl. Another
	// binary (a test's fake) runs for every command.
	Binary string
	// AlwaysRun runs kubectl for every command, reads and writes too: for tests of kubectl's
	// behaviour.
	AlwaysRun bool
}

// Run runs kubectl with stdin (when not empty) and returns its output.
func (k Kubectl) Run(t testing.TB, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return k.Exec(stdin, args...)
}

// Exec is Run for code without a test at hand (a watch started by TestMain).
func (k Kubectl) Exec(stdin string, args ...string) (stdout, stderr string, err error) {
	return k.execWithin(3*time.Minute, stdin, args...)
}

// execWithin runs kubectl, killing it after limit; the reads and writes it can answer with
// client-go are answered in this process (kubectlget.go, kubectlwrite.go, kubectlexec.go).
func (k Kubectl) execWithin(limit time.Duration, stdin string, args ...string) (stdout, stderr string, err error) {
	if stdout, stderr, err = k.getWithin(limit, args); !errors.Is(err, errKubectlMustAnswer) {
		return stdout, stderr, err
	}
	if stdout, stderr, err = k.writeWithin(limit, stdin, args); !errors.Is(err, errKubectlMustAnswer) {
		return stdout, stderr, err
	}
	if stdout, stderr, err = k.execIn(limit, stdin, args); !errors.Is(err, errKubectlMustAnswer) {
		return stdout, stderr, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	bin := k.Binary
	if bin == "" {
		bin = "/usr/bin/kubectl"
	}
	traceKubectl(args)
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", k.Kubeconfig}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// traceKubectl appends the arguments of a kubectl the tests run to the file KUBECTL_TRACE
// names (make accounting sets it), one command per line, so that what still runs kubectl
// is counted rather than guessed.
func traceKubectl(args []string) {
	path := os.Getenv("KUBECTL_TRACE")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintln(f, strings.Join(args, " "))
}

// Must fails the test when kubectl fails and returns its standard output. A request that
// never reached a server (kube-apiserver refused the connection, or the aggregator had no
// ready endpoint for an APIService for a moment, as on a loaded machine) is tried again for
// up to a minute, as a client would; tests that judge availability count such answers
// themselves instead of using Must.
func (k Kubectl) Must(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	run := func() (string, string, error) { return k.Run(t, stdin, args...) }
	return mustRetrying(t, time.Minute, notServed, run, args)
}

// Apply runs `kubectl apply --server-side` with args and returns its output. Besides what
// Must tries again, it tries again for up to timeout when the server answered that a
// request timed out: whether that object was applied is then unknown, and applying the
// same configuration again is idempotent. Large objects (the Prometheus Operator's CRDs
// are 0.6 to 0.8 MB each) can take a loaded apiserver past its one-minute request timeout.
// One run of kubectl, which applies its objects one after another, may take all of timeout.
func (k Kubectl) Apply(t testing.TB, timeout time.Duration, stdin string, args ...string) string {
	t.Helper()
	args = append([]string{"apply", "--server-side"}, args...)
	run := func() (string, string, error) { return k.execWithin(timeout, stdin, args...) }
	retry := func(stderr string) bool { return notServed(stderr) || timedOut(stderr) }
	return mustRetrying(t, timeout, retry, run, args)
}

// mustRetrying calls run until kubectl succeeds or fails in a way retry does not accept,
// for up to timeout, and fails the test when the last run failed.
func mustRetrying(t testing.TB, timeout time.Duration, retry func(stderr string) bool, run func() (string, string, error), args []string) string {
	t.Helper()
	var out, errOut string
	var err error
	start := time.Now()
	_ = Poll(timeout, 2*time.Second, func() bool {
		if out, errOut, err = run(); err == nil || !retry(errOut) {
			return true
		}
		t.Logf("kubectl %s failed after %s, trying again: %s", strings.Join(args, " "), Describe(time.Since(start)), strings.TrimSpace(errOut))
		return false
	})
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// timedOut reports whether kubectl's error says the server gave up on a request within
// its time limit, so that the request may or may not have taken effect.
func timedOut(stderr string) bool {
	return strings.Contains(stderr, "Error from server (Timeout)") ||
		strings.Contains(stderr, "Error from server (ServerTimeout)")
}

// notServed reports whether kubectl's error says the request reached no server that
// could act on it, so that sending it again cannot do anything twice.
func notServed(stderr string) bool {
	return strings.Contains(stderr, "the server is currently unable to handle the request") ||
		strings.Contains(stderr, "connect: connection refused")
}

// Get returns kubectl's standard output, or "" when it fails.
func (k Kubectl) Get(t testing.TB, args ...string) string {
	t.Helper()
	out, _, err := k.Run(t, "", args...)
	if err != nil {
		return ""
	}
	return out
}

// WaitEstablished waits until every CustomResourceDefinition in refs (kind/name, as
// `kubectl get -o name` prints them) has condition Established=True. It polls instead of
// using `kubectl wait --for=condition=Established`, which fails at once, rather than
// waiting, when it reads a CRD the apiextensions controller has not given conditions yet.
func (k Kubectl) WaitEstablished(t testing.TB, timeout time.Duration, refs ...string) time.Duration {
	t.Helper()
	return WaitFor(t, timeout, "CRDs established: "+strings.Join(refs, ", "), func() bool {
		for _, ref := range refs {
			status := k.Get(t, "get", ref, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
			if strings.TrimSpace(status) != "True" {
				return false
			}
		}
		return true
	})
}

// WaitForOutput polls kubectl until its standard output is want and returns how long
// that took; it fails the test after timeout, naming the last output.
func (k Kubectl) WaitForOutput(t testing.TB, timeout time.Duration, want string, args ...string) time.Duration {
	t.Helper()
	var last string
	start := time.Now()
	if !Poll(timeout, 250*time.Millisecond, func() bool { last = k.Get(t, args...); return last == want }) {
		t.Fatalf("timed out after %s waiting for kubectl %s = %q; last %q", timeout, strings.Join(args, " "), want, last)
	}
	return time.Since(start)
}

// Describe formats a duration for test logs.
func Describe(d time.Duration) string { return fmt.Sprint(d.Round(100 * time.Millisecond)) }
