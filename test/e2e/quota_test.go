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

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestResourceQuotaCountsNginxOperators: a ResourceQuota of the cluster limits the number
// of NginxOperators of a namespace as it would a CRD's objects. kube-controller-manager
// computes the usage through the aggregation layer, our apiserver refuses a create beyond
// the limit with kube's message (server-side dry runs too) and charges the ones it
// accepts, and a deletion gives the room back.
func TestResourceQuotaCountsNginxOperators(t *testing.T) {
	t.Parallel()
	const ns, counted = "e2e-quota-count", "count/nginxoperators.operator.example.com"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, "", "create", "quota", "nginxoperators", "-n", ns, "--hard="+counted+"=2")
	took := kc.WaitForOutput(t, 2*time.Minute, fmt.Sprintf(`{%q:"2"} {%q:"0"}`, counted, counted),
		"get", "resourcequota", "nginxoperators", "-n", ns, "-o", "jsonpath={.status.hard}{' '}{.status.used}")
	t.Logf("quota status computed after %s", framework.Describe(took))

	create := func(version, name string, extra ...string) (string, error) {
		manifest := fmt.Sprintf("apiVersion: operator.example.com/%s\nkind: NginxOperator\nmetadata: {name: %s, namespace: %s}\nspec: {}\n", version, name, ns)
		_, errOut, err := kubectl(t, manifest, append([]string{"create", "-f", "-"}, extra...)...)
		return errOut, err
	}
	// Both versions are one resource, counted once.
	for version, name := range map[string]string{"v1alpha2": "first", "v1alpha1": "second"} {
		if errOut, err := create(version, name); err != nil {
			t.Fatalf("create %s within the quota: %v %s", name, err, errOut)
		}
	}
	refused := fmt.Sprintf("exceeded quota: nginxoperators, requested: %[1]s=1, used: %[1]s=2, limited: %[1]s=2", counted)
	for _, dryRun := range []string{"--dry-run=server", "--dry-run=none"} {
		errOut, err := create("v1alpha2", "third", dryRun)
		if err == nil || !strings.Contains(errOut, "Forbidden") || !strings.Contains(errOut, refused) {
			t.Fatalf("create %s beyond the quota: %v %q, want 403 %q", dryRun, err, errOut, refused)
		}
	}
	describe := mustKubectl(t, "", "describe", "resourcequota", "nginxoperators", "-n", ns)
	if !regexp.MustCompile(regexp.QuoteMeta(counted) + `\s+2\s+2`).MatchString(describe) {
		t.Fatalf("kubectl describe quota does not show 2 used of 2:\n%s", describe)
	}

	mustKubectl(t, "", "delete", "nginxoperator", "first", "-n", ns)
	took = framework.WaitFor(t, 2*time.Minute, "the deletion to give the room back", func() bool {
		_, err := create("v1alpha2", "third")
		return err == nil
	})
	t.Logf("a create was accepted again %s after the deletion", framework.Describe(took))
	if errOut, err := create("v1alpha2", "fourth"); err == nil || !strings.Contains(errOut, refused) {
		t.Fatalf("create beyond the quota after the room was used again: %v %q, want %q", err, errOut, refused)
	}
}
