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

package manifests

// The alert rules of the prometheus overlay, checked and unit-tested with Prometheus' own
// promtool; prometheusrule_test.go checks that the PrometheusRule is generated from them.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// prometheusDir is the kustomize component that holds the rules.
var prometheusDir = filepath.Join("..", "..", "artifacts", "overlays", "components", "prometheus")

var (
	rulesFile     = filepath.Join(prometheusDir, "rules", "nginx-operator.rules.yaml")
	rulesTestFile = filepath.Join(prometheusDir, "rules", "nginx-operator.rules.test.yaml")
)

// promtool finds promtool (Debian's prometheus package). Outside CI a machine without it
// skips the checks; CI installs it (.ci/run), so there a missing promtool fails.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("promtool is required in CI (apt-get install prometheus): %v", err)
	}
	t.Skipf("promtool not found (apt-get install prometheus); skipping the alert rule checks: %v", err)
	return ""
}

// runPromtool runs promtool in the rules' directory, so the test file's rule_files resolve.
func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = filepath.Dir(rulesFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

// TestPromtoolCheckRules checks syntax, PromQL and templates of every alert.
func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, "check", "rules", filepath.Base(rulesFile))
}

// TestPromtoolTestRules runs the alerts' unit tests: each fires on failing series once its
// `for:` has passed and stays quiet on healthy ones.
func TestPromtoolTestRules(t *testing.T) {
	runPromtool(t, "test", "rules", filepath.Base(rulesTestFile))
}
