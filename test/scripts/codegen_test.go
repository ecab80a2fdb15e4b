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

// Package scripts checks the project's scripts without a cluster: on a fresh clone, where
// the module cache has nothing yet, and against a scripted kubectl.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodegenFindsItsGeneratorInAnEmptyModuleCache runs the lookup hack/update-codegen.sh
// uses with a module cache that has never seen k8s.io/code-generator, as on a fresh
// machine (make generate failed there with "/kube_codegen.sh: No such file").
func TestCodegenFindsItsGeneratorInAnEmptyModuleCache(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cmd := exec.Command("bash", "-c", `source hack/lib-codegen.sh && codegen_dir`)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOMODCACHE="+cache, "GOFLAGS=-modcacherw")
	out, err := cmd.Output()
	if exit, ok := err.(*exec.ExitError); ok {
		t.Fatalf("codegen_dir with an empty module cache: %v\n%s%s", err, out, exit.Stderr)
	}
	if err != nil {
		t.Fatalf("codegen_dir with an empty module cache: %v\n%s", err, out)
	}
	dir := strings.TrimSpace(string(out))
	if !strings.HasPrefix(dir, cache) {
		t.Errorf("codegen_dir = %q, want a directory in the fresh module cache %s", dir, cache)
	}
	if _, err := os.Stat(filepath.Join(dir, "kube_codegen.sh")); err != nil {
		t.Error(err)
	}
}
