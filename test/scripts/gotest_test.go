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

package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gotestModule writes a module whose packages pass, fail, do not build, and share their
// last path element (a/same and b/same: go test -c -o DIR/ cannot write both to one
// directory).
func gotestModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                "module example.com/m\n\ngo 1.26\n",
		"a/same/same_test.go":   "package same\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { t.Log(\"quiet when it passes\") }\n",
		"b/same/same_test.go":   "package same\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { t.Log(\"quiet too\") }\n",
		"fails/fails_test.go":   "package fails\n\nimport \"testing\"\n\nfunc TestFails(t *testing.T) { t.Fatal(\"shown when it fails\") }\n",
		"broken/broken_test.go": "package broken\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { undefined() }\n",
		"notests/notests.go":    "package notests\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runGotest runs hack/gotest.sh on module with args and returns its output and exit code.
func runGotest(t *testing.T, binDir, module string, args ...string) (string, int) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{"hack/gotest.sh", module}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOTEST_BIN_DIR="+binDir)
	out, err := cmd.CombinedOutput()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestGotestKeepsTheTestBinaries runs hack/gotest.sh twice on one module: it answers as go
// test does (ok, FAIL with the failing test's output, a package that does not build named,
// exit 1), and the second run links no binary that did not change.
func TestGotestKeepsTheTestBinaries(t *testing.T) {
	module, bins := gotestModule(t), t.TempDir()
	out, code := runGotest(t, bins, module, "-count=1", "./...")
	if code != 1 {
		t.Errorf("exit %d, want 1 (a package fails, one does not build)\n%s", code, out)
	}
	for _, want := range []string{
		`(?m)^ok  \texample.com/m/a/same\t[0-9.]+s$`,
		`(?m)^ok  \texample.com/m/b/same\t[0-9.]+s$`,
		`(?m)^FAIL\texample.com/m/fails\t[0-9.]+s$`,
		`shown when it fails`,
		`(?m)^FAIL\texample.com/m/broken \[build failed\]$`,
		`undefined: undefined`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "quiet") {
		t.Errorf("a passing test's log is shown:\n%s", out)
	}

	// Again, with go's commands printed (-x is a build flag): the binaries are current.
	out, code = runGotest(t, bins, module, "-x", "-count=1", "./a/...", "./b/...", "./fails")
	if code != 1 {
		t.Errorf("second run: exit %d, want 1\n%s", code, out)
	}
	if links := regexp.MustCompile(`(?m)/link .*-o `).FindAllString(out, -1); len(links) != 0 {
		t.Errorf("second run linked %d test binaries again, want none:\n%s", len(links), out)
	}
	if !strings.Contains(out, "ok  \texample.com/m/a/same") || !strings.Contains(out, "ok  \texample.com/m/b/same") {
		t.Errorf("second run did not run both packages named same:\n%s", out)
	}

	// -v streams a single package's output, its passing tests' logs included.
	out, code = runGotest(t, bins, module, "-v", "-count=1", "./a/same")
	if code != 0 || !strings.Contains(out, "quiet when it passes") || !strings.Contains(out, "ok  \texample.com/m/a/same") {
		t.Errorf("-v on one package: exit %d\n%s", code, out)
	}
}
