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
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// answeringKubectl is a kubectl that fails its first run with stderr and succeeds from
// then on; it records every run's arguments in the file it returns.
func answeringKubectl(t *testing.T, stderr string) (Kubectl, string) {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := `#!/bin/sh
echo "$*" >> '` + calls + `'
if [ "$(wc -l < '` + calls + `')" -eq 1 ]; then echo '` + stderr + `' >&2; exit 1; fi
echo applied
`
	bin := filepath.Join(dir, "kubectl")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Kubectl{Kubeconfig: "kubeconfig", Binary: bin}, calls
}

func runs(t *testing.T, calls string) []string {
	t.Helper()
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestApplyTriesAgainWhenTheServerTimedOut(t *testing.T) {
	kc, calls := answeringKubectl(t, "Error from server (Timeout): Timeout: request did not complete within requested timeout - context deadline exceeded")
	if out := kc.Apply(t, time.Minute, "", "-f", "crds"); out != "applied\n" {
		t.Errorf("output %q, want the second run's", out)
	}
	want := "--kubeconfig kubeconfig apply --server-side -f crds"
	if got := runs(t, calls); len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("runs %q, want two of %q", got, want)
	}
}

func TestMustTriesAgainARequestThatReachedNoServer(t *testing.T) {
	kc, calls := answeringKubectl(t, "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port? dial tcp 127.0.0.1:6443: connect: connection refused")
	if out := kc.Must(t, "", "create", "-f", "x"); out != "applied\n" {
		t.Errorf("output %q, want the second run's", out)
	}
	if got := runs(t, calls); len(got) != 2 {
		t.Errorf("runs %q, want two", got)
	}
}

// A write that timed out may have been done, so Must, which runs any verb, does not send
// it again: it fails the test.
func TestMustDoesNotRepeatARequestThatTimedOut(t *testing.T) {
	kc, calls := answeringKubectl(t, "Error from server (Timeout): Timeout: request did not complete within requested timeout - context deadline exceeded")
	tb := &fatalRecorder{TB: t}
	done := make(chan struct{})
	// Must ends a failed test with Fatalf, which exits the goroutine it runs on.
	go func() {
		defer close(done)
		kc.Must(tb, "", "create", "-f", "x")
	}()
	<-done
	if !tb.fatal {
		t.Error("Must did not fail the test")
	}
	if got := runs(t, calls); len(got) != 1 {
		t.Errorf("runs %q, want one", got)
	}
}

// fatalRecorder is a test whose Fatalf is recorded instead of failing the real test.
type fatalRecorder struct {
	testing.TB
	fatal bool
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(string, ...any) {
	r.fatal = true
	runtime.Goexit()
}
