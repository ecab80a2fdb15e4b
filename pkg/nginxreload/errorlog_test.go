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

package nginxreload

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func appendLog(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestLogTail: new complete lines are returned and copied, each once; a line without
// its newline yet waits; a missing file has no lines.
func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "error.log")
	var out bytes.Buffer
	tail := &logTail{path: path, max: DefaultMaxErrorLogBytes, out: &out}
	if lines, err := tail.read(); err != nil || lines != nil {
		t.Fatalf("no file yet: %q, %v", lines, err)
	}
	appendLog(t, path, "2026/11/26 10:00:00 [warn] 7#7: one\n2026/11/26 10:00:00 [warn] 7#7: tw")
	if lines, err := tail.read(); err != nil || !slices.Equal(lines, []string{"2026/11/26 10:00:00 [warn] 7#7: one"}) {
		t.Fatalf("first read: %q, %v", lines, err)
	}
	appendLog(t, path, "o\n")
	if lines, err := tail.read(); err != nil || !slices.Equal(lines, []string{"2026/11/26 10:00:00 [warn] 7#7: two"}) {
		t.Fatalf("second read: %q, %v", lines, err)
	}
	if lines, _ := tail.read(); lines != nil {
		t.Errorf("nothing new: %q", lines)
	}
	if want := "2026/11/26 10:00:00 [warn] 7#7: one\n2026/11/26 10:00:00 [warn] 7#7: two\n"; out.String() != want {
		t.Errorf("copied %q, want %q", out.String(), want)
	}
}

// TestLogTailTruncates: a file read beyond max is emptied, and nginx's next line (it
// appends) is read from the start; a file someone else emptied is read from the start too.
func TestLogTailTruncates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "error.log")
	var out bytes.Buffer
	tail := &logTail{path: path, max: 100, out: &out}
	appendLog(t, path, strings.Repeat("x", 60)+"\n")
	if _, err := tail.read(); err != nil {
		t.Fatal(err)
	}
	if got := size(t, path); got != 61 {
		t.Fatalf("61 bytes, below max: emptied to %d", got)
	}
	appendLog(t, path, strings.Repeat("y", 60)+"\n")
	if lines, err := tail.read(); err != nil || len(lines) != 1 || lines[0] != strings.Repeat("y", 60) {
		t.Fatalf("read beyond max: %q, %v", lines, err)
	}
	if got := size(t, path); got != 0 {
		t.Errorf("read beyond max: %d bytes left, want 0", got)
	}
	appendLog(t, path, "after\n")
	if lines, err := tail.read(); err != nil || !slices.Equal(lines, []string{"after"}) {
		t.Errorf("after emptying: %q, %v", lines, err)
	}

	// Emptied by someone else, then a shorter line than what was read.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendLog(t, path, "new\n")
	if lines, err := tail.read(); err != nil || !slices.Equal(lines, []string{"new"}) {
		t.Errorf("after someone emptied it: %q, %v", lines, err)
	}
	if want := strings.Repeat("x", 60) + "\n" + strings.Repeat("y", 60) + "\nafter\nnew\n"; out.String() != want {
		t.Errorf("copied %q, want %q", out.String(), want)
	}
}

func TestFailureLine(t *testing.T) {
	for line, want := range map[string]string{
		`2026/11/26 10:00:00 [emerg] 7#7: unknown directive "foo" in /etc/nginx/nginx-operator-config/nginx.conf:3`:    `[emerg] unknown directive "foo" in /etc/nginx/nginx-operator-config/nginx.conf:3`,
		`2026/11/26 10:00:00 [alert] 1#1: *12 open() "/var/run/nginx.pid" failed (13: Permission denied)`:              `[alert] open() "/var/run/nginx.pid" failed (13: Permission denied)`,
		`nginx: [emerg] host not found in upstream "backend"`:                                                          `nginx: [emerg] host not found in upstream "backend"`,
		`2026/11/26 10:00:00 [warn] 7#7: conflicting server name "a" on 0.0.0.0:80, ignored`:                           "",
		`2026/11/26 10:00:00 [error] 31#31: *5 open() "/usr/share/nginx/html/x" failed (2: No such file or directory)`: "",
	} {
		got, ok := failureLine(line)
		if ok != (want != "") || got != want {
			t.Errorf("%s:\n got %q, %v\nwant %q", line, got, ok, want)
		}
	}
}
