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
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// prometheusrule.yaml is rendered from the chart (make generate), whose PrometheusRule embeds
// a copy of the rules file as its spec.
var prometheusRuleFile = filepath.Join(prometheusDir, "prometheusrule.yaml")

// TestPrometheusRuleHoldsTheRulesFile checks that the PrometheusRule the prometheus component
// installs is one whose spec parses to exactly the rules file's groups, which promtool checks
// and unit-tests (make verify fails when the file is stale).
func TestPrometheusRuleHoldsTheRulesFile(t *testing.T) {
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(prometheusRuleFile)
	if err != nil {
		t.Fatal(err)
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
