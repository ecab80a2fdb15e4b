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

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite prometheusrule.yaml from rules/nginx-operator.rules.yaml")

var prometheusRuleFile = filepath.Join(prometheusDir, "prometheusrule.yaml")

// prometheusRuleHeader precedes the rules file, indented under spec:, in prometheusrule.yaml.
const prometheusRuleHeader = `# Generated from rules/nginx-operator.rules.yaml by
#   go -C test test ./manifests -run TestPrometheusRule -update
# Do not edit; edit the rules file (which promtool checks and unit-tests) instead.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: nginx-operator
  namespace: nginx-operator-system
  labels:
    app.kubernetes.io/name: nginx-operator
    app.kubernetes.io/part-of: nginx-operator
spec:
`

// prometheusRule wraps the rules file into a PrometheusRule: the file's text, comments
// included, becomes spec, so the alerts have one hand-kept copy.
func prometheusRule(rules []byte) []byte {
	var b bytes.Buffer
	b.WriteString(prometheusRuleHeader)
	for _, line := range strings.SplitAfter(string(rules), "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	return b.Bytes()
}

// TestPrometheusRuleIsGeneratedFromRulesFile fails when prometheusrule.yaml is not what
// the rules file generates (-update rewrites it), and checks that its spec parses to
// exactly the rules file's groups.
func TestPrometheusRuleIsGeneratedFromRulesFile(t *testing.T) {
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	want := prometheusRule(rules)
	if *update {
		if err := os.WriteFile(prometheusRuleFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(prometheusRuleFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go -C test test ./manifests -run TestPrometheusRule -update", prometheusRuleFile)
	}

	var fromRules map[string]any
	if err := yaml.UnmarshalStrict(rules, &fromRules); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	var object struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Spec       map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(got, &object); err != nil {
		t.Fatalf("%s: %v", prometheusRuleFile, err)
	}
	if object.APIVersion != "monitoring.coreos.com/v1" || object.Kind != "PrometheusRule" {
		t.Errorf("%s is a %s %s, want a monitoring.coreos.com/v1 PrometheusRule", prometheusRuleFile, object.APIVersion, object.Kind)
	}
	if !reflect.DeepEqual(object.Spec, fromRules) {
		t.Errorf("spec of %s differs from %s:\nspec:  %v\nrules: %v", prometheusRuleFile, rulesFile, object.Spec, fromRules)
	}
	if groups, _ := fromRules["groups"].([]any); len(groups) == 0 {
		t.Errorf("%s has no rule groups", rulesFile)
	}
}
