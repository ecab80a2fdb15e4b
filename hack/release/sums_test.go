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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSums(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("release.json", "{}")
	write("images/a/blobs/sha256/x", "layer")
	write(sumsSignature, "not listed")
	if err := writeSums(dir); err != nil {
		t.Fatal(err)
	}
	if problems, err := checkSums(dir); err != nil || len(problems) > 0 {
		t.Fatalf("a fresh SHA256SUMS: %v %v", problems, err)
	}
	write("images/a/blobs/sha256/x", "layeR")
	write("extra", "")
	if err := os.Remove(filepath.Join(dir, "release.json")); err != nil {
		t.Fatal(err)
	}
	problems, err := checkSums(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{"extra: in the release but not in SHA256SUMS", "images/a/blobs/sha256/x: SHA-256", "release.json: listed in SHA256SUMS but missing"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in the problems:\n%s", want, got)
		}
	}
	if len(problems) != 3 {
		t.Errorf("%d problems, want 3:\n%s", len(problems), got)
	}
}
