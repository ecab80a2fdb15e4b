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
	"strings"
	"testing"
	"time"
)

// TestMetricsSidecarFollowsSpec: an NginxOperator's pods carry the nginx-exporter sidecar
// by default (spec.metrics defaulted on) with its port, the status server's configuration
// and no token, and lose it when spec.metrics.enabled turns false. Whether Prometheus
// scrapes it and the counters follow traffic is the real node's to show (test/deploy).
func TestMetricsSidecarFollowsSpec(t *testing.T) {
	t.Parallel()
	const ns, name = "e2e-nginx-metrics", "metered"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, `{"apiVersion": "operator.example.com/v1alpha2", "kind": "NginxOperator", "metadata": {"name": "`+name+`", "namespace": "`+ns+`"}}`, "apply", "-f", "-")
	if got := strings.TrimSpace(mustKubectl(t, "", "get", "ngx", name, "-n", ns, "-o", "jsonpath={.spec.metrics.enabled}")); got != "true" {
		t.Fatalf("spec.metrics.enabled = %q, want the default true", got)
	}
	template := []string{"get", "deployment", name, "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[*].name} " +
		`{.spec.template.spec.containers[?(@.name=="nginx-exporter")].ports[*].name}:{.spec.template.spec.containers[?(@.name=="nginx-exporter")].ports[*].containerPort} ` +
		`{.spec.template.spec.volumes[?(@.name=="nginx-operator-status")].downwardAPI.items[*].path} ` +
		`{.spec.template.spec.automountServiceAccountToken}`}
	took := kc.WaitForOutput(t, 2*time.Minute, "nginx nginx-exporter metrics:9113 status.conf false", template...)
	t.Logf("the Deployment runs the exporter sidecar %s after the create", took.Round(100*time.Millisecond))
	exporter := mustKubectl(t, "", "get", "deployment", name, "-n", ns, "-o",
		`jsonpath={.spec.template.spec.containers[?(@.name=="nginx-exporter")].securityContext}`)
	for _, want := range []string{`"readOnlyRootFilesystem":true`, `"runAsNonRoot":true`, `"allowPrivilegeEscalation":false`, `"drop":["ALL"]`} {
		if !strings.Contains(exporter, want) {
			t.Errorf("the exporter's securityContext %s lacks %s", exporter, want)
		}
	}

	mustKubectl(t, "", "patch", "ngx", name, "-n", ns, "--type=merge", "-p", `{"spec":{"metrics":{"enabled":false}}}`)
	took = kc.WaitForOutput(t, 2*time.Minute, "nginx", "get", "deployment", name, "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[*].name}")
	t.Logf("the sidecar left the Deployment %s after spec.metrics.enabled turned false", took.Round(100*time.Millisecond))
}
