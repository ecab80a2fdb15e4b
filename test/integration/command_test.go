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

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestCommandLineIsRefusedBeforeServing runs the binary with command lines it must
// refuse: it exits with status 1, says why, and leaves nothing behind.
func TestCommandLineIsRefusedBeforeServing(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"no storage: neither --etcd-servers nor --data-dir", nil,
			[]string{"no storage configured", "--etcd-servers", "--data-dir", "embedded"}},
		{"standalone without --data-dir", []string{"--standalone"},
			[]string{"--standalone requires --data-dir"}},
		{"a bad audit flag", []string{"--etcd-servers=http://127.0.0.1:2379", "--audit-log-path=audit.log", "--audit-log-maxage=-1"},
			[]string{"--audit-log-maxage -1 can't be a negative number"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A fresh working directory shows whether anything was created in it,
			// such as a relative data directory for a fallback etcd.
			workDir := t.TempDir()
			// Should the server start after all, it must not take a port someone uses.
			args := append([]string{"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", framework.MustFreePort(t))}, tc.args...)
			code, out := run(t, workDir, args...)
			if code != 1 {
				t.Errorf("exit code %d, want 1; output:\n%s", code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if entries, err := os.ReadDir(workDir); err != nil || len(entries) != 0 {
				t.Errorf("working directory after a refused start: %v %v", entries, err)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	code, out := run(t, t.TempDir(), "--version")
	if code != 0 || !strings.HasPrefix(out, "nginx-operator "+builtVersion+" ") {
		t.Errorf("--version: exit code %d, output %q; want 0 and nginx-operator %s", code, out, builtVersion)
	}
}

// run runs the binary in dir and returns its exit code and combined output. A binary
// that does not exit within a minute (one that serves) is killed and fails the test.
func run(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, apiserverBinary, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not exit within a minute; output:\n%s", filepath.Base(apiserverBinary), args, out.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}
