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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The ClusterRoles for users that the base aggregates into view, edit and admin are bound
// by nothing, so the CSV's permissions cannot carry them: they must be in bundle/manifests
// as they are, labels and rules included, while the operator's own ClusterRoles stay CSV
// permissions.
func TestUnboundClusterRolesAreBundleManifests(t *testing.T) {
	files, _, err := generate(repoOptions())
	if err != nil {
		t.Fatal(err)
	}
	rendered := renderedBase(t)
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"nginx-operator-view", []string{"aggregate-to-view", "aggregate-to-edit", "aggregate-to-admin"}},
		{"nginx-operator-edit", []string{"aggregate-to-edit", "aggregate-to-admin"}},
	} {
		data, ok := files["manifests/"+c.name+"_rbac.authorization.k8s.io_v1_clusterrole.yaml"]
		if !ok {
			t.Errorf("ClusterRole %s is not in bundle/manifests", c.name)
			continue
		}
		var got unstructured.Unstructured
		if err := yaml.Unmarshal(data, &got.Object); err != nil {
			t.Fatal(err)
		}
		for _, l := range c.labels {
			if got.GetLabels()["rbac.authorization.k8s.io/"+l] != "true" {
				t.Errorf("ClusterRole %s in the bundle lacks the label rbac.authorization.k8s.io/%s", c.name, l)
			}
		}
		want := find(rendered, "ClusterRole", c.name)
		if want == nil {
			t.Fatalf("the base has no ClusterRole %s", c.name)
		}
		gotRules, _, _ := unstructured.NestedSlice(got.Object, "rules")
		wantRules, _, _ := unstructured.NestedSlice(want.Object, "rules")
		if g, w := yamlOf(t, gotRules), yamlOf(t, wantRules); g != w {
			t.Errorf("ClusterRole %s: the bundle's rules %s, the base's %s", c.name, g, w)
		}
	}
	for name := range files {
		if strings.Contains(name, "nginx-operator-controller_rbac") || strings.Contains(name, "nginx-operator-apiserver_rbac") {
			t.Errorf("%s: a ClusterRole the base binds to the operator's ServiceAccounts belongs in the CSV's permissions", name)
		}
	}
}

func yamlOf(t *testing.T, v any) string {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
