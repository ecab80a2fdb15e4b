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
	"testing"
)

// Without TOOLS_BIN_DIR the tools are the ones of the checkout the test runs in, found
// from a package directory below it.
func TestToolBinaryFindsTheCheckoutsTools(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"hack/tools/build.sh":   "#!/bin/sh\n",
		"hack/tools/bin/env.sh": "HELM_BIN=/opt/helm\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkg := filepath.Join(root, "test", "e2e")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	t.Setenv("TOOLS_BIN_DIR", "")
	if got := ToolBinary(t, "HELM_BIN"); got != "/opt/helm" {
		t.Errorf("ToolBinary(HELM_BIN) = %q, want /opt/helm from %s", got, filepath.Join(root, "hack/tools/bin/env.sh"))
	}
}

// Outside a checkout there are no tools to find, and the error says where it looked.
func TestCheckoutOutsideACheckoutIsAnError(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if root, err := checkout(); err == nil {
		t.Errorf("checkout() = %q from %s, want an error: no hack/tools/build.sh there or above", root, dir)
	}
}
