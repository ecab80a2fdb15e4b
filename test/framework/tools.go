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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ToolBinary is the path of a pinned tool `make tools` built, as variable (ETCD_BIN,
// HELM_BIN, ...) of ${TOOLS_BIN_DIR:-<repo>/hack/tools/bin}/env.sh names it, which is how
// hack/local-up.sh finds them too.
func ToolBinary(t testing.TB, variable string) string {
	t.Helper()
	path, err := Tool(variable)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Tool is ToolBinary for code without a test at hand (a build TestMain starts).
func Tool(variable string) (string, error) {
	toolsDir := os.Getenv("TOOLS_BIN_DIR")
	if toolsDir == "" {
		root, err := checkout()
		if err != nil {
			return "", err
		}
		toolsDir = filepath.Join(root, "hack", "tools", "bin")
	}
	envFile := filepath.Join(toolsDir, "env.sh")
	out, err := exec.Command("bash", "-c", `source "$1" && printf %s "${!2}"`, "bash", envFile, variable).Output()
	if err != nil || len(out) == 0 {
		return "", fmt.Errorf("no %s from %s (run `make tools`): %v", variable, envFile, err)
	}
	return string(out), nil
}

// checkout is the repository the test runs in: go test runs each test in its package's
// directory. (Not the source file's path: make test builds the suites with -trimpath,
// which leaves no file system path in the binary.)
func checkout() (string, error) {
	start, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := start; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "hack", "tools", "build.sh")); err == nil {
			return dir, nil
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("no checkout of nginx-operator (hack/tools/build.sh) at or above %s", start)
		}
	}
}
