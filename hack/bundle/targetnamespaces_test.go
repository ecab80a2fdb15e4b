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
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestControllerFollowsTheTargetNamespaces: the bundle's controller gets OLM's target
// namespaces as --namespaces through the downward API, and its rules on namespaced
// resources are permissions (granted by OLM in each target namespace), while the metrics
// authentication rules and every rule of the apiserver stay cluster permissions.
func TestControllerFollowsTheTargetNamespaces(t *testing.T) {
	files, _, err := generate(repoOptions())
	if err != nil {
		t.Fatal(err)
	}
	csv := string(files["manifests/nginx-operator.clusterserviceversion.yaml"])
	for _, want := range []string{"- --namespaces=$(OLM_TARGET_NAMESPACES)", "fieldPath: metadata.annotations['olm.targetNamespaces']"} {
		if !strings.Contains(csv, want) {
			t.Errorf("the CSV lacks %q", want)
		}
	}

	b, err := splitBase(renderedBase(t))
	if err != nil {
		t.Fatal(err)
	}
	confined := confinedAccounts(b)
	if len(confined) != 1 || !confined["nginx-operator-controller"] {
		t.Fatalf("confined accounts %v, want only nginx-operator-controller", confined)
	}
	namespaced, cluster, err := permissions(b, "nginx-operator-apiserver", confined)
	if err != nil {
		t.Fatal(err)
	}
	rules := func(perms []operatorsv1alpha1.StrategyDeploymentPermissions, account string) []string {
		var out []string
		for _, p := range perms {
			if p.ServiceAccountName == account {
				for _, r := range p.Rules {
					out = append(out, r.Resources...)
				}
			}
		}
		return out
	}
	if got := rules(cluster, "nginx-operator-controller"); !slices.Equal(got, []string{"tokenreviews", "subjectaccessreviews"}) {
		t.Errorf("the controller's cluster permissions are on %v, want tokenreviews and subjectaccessreviews only", got)
	}
	got := rules(namespaced, "nginx-operator-controller")
	for _, want := range []string{"nginxoperators", "nginxoperators/status", "deployments", "services", "secrets", "configmaps", "pods", "events", "leases"} {
		if !slices.Contains(got, want) {
			t.Errorf("the controller's permissions %v lack %s", got, want)
		}
	}
	if got := rules(namespaced, "nginx-operator-apiserver"); len(got) != 0 {
		t.Errorf("the apiserver, which serves every namespace whatever the install mode, has namespaced permissions on %v", got)
	}
	if len(rules(cluster, "nginx-operator-apiserver")) == 0 {
		t.Error("the apiserver has no cluster permissions")
	}
}

func TestRuleScope(t *testing.T) {
	for _, c := range []struct {
		rule    rbacv1.PolicyRule
		cluster bool
		err     string
	}{
		{rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}}, true, ""},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}}, true, ""},
		{rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}}, true, ""},
		{rbacv1.PolicyRule{APIGroups: []string{"operator.example.com"}, Resources: []string{"nginxoperators/status"}}, false, ""},
		{rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io", ""}, Resources: []string{"events"}}, false, ""},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets", "namespaces"}}, false, "mixes"},
	} {
		cluster, err := ruleIsClusterScoped(c.rule)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.rule, err, c.err)
			}
			continue
		}
		if err != nil || cluster != c.cluster {
			t.Errorf("%v: cluster-scoped %v, %v; want %v", c.rule, cluster, err, c.cluster)
		}
	}
}

// A base whose controller already names its namespaces is refused: under OLM the
// OperatorGroup decides.
func TestBaseControllerWithNamespacesIsRefused(t *testing.T) {
	objects := renderedBase(t)
	d := find(objects, "Deployment", "nginx-operator-controller")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	c["args"] = append(c["args"].([]any), "--namespaces=web")
	if err := unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := buildFrom(objects); err == nil || !strings.Contains(err.Error(), "--namespaces=web") {
		t.Errorf("build = %v, want it refused", err)
	}
}
