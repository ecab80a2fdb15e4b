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

	"github.com/example/nginx-operator/test/framework"
)

func TestDiscovery(t *testing.T) {
	resources := mustKubectl(t, "", "api-resources", "--api-group", "operator.example.com")
	if !strings.Contains(resources, "nginxoperators") || !strings.Contains(resources, "ngx") || !strings.Contains(resources, "operator.example.com/v1alpha2") {
		t.Errorf("api-resources:\n%s", resources)
	}
	versions := mustKubectl(t, "", "api-versions")
	for _, v := range []string{"operator.example.com/v1alpha1", "operator.example.com/v1alpha2"} {
		if !strings.Contains(versions, v+"\n") {
			t.Errorf("api-versions lacks %s", v)
		}
	}
	for _, name := range []string{"v1alpha1.operator.example.com", "v1alpha2.operator.example.com"} {
		out := mustKubectl(t, "", "get", "apiservice", name, "-o", "jsonpath={.spec.insecureSkipTLSVerify} {.spec.caBundle}")
		if strings.HasPrefix(out, "true") || len(out) < 100 {
			t.Errorf("%s must verify TLS with a caBundle: %q", name, out)
		}
	}
}

// TestAPIServiceAvailableSoonAfterRestart restarts our apiserver and measures the time
// from its /readyz to both APIServices being Available again.
func TestAPIServiceAvailableSoonAfterRestart(t *testing.T) {
	restart := stopOperatorAPIServer(t)
	waitFor(t, 3*time.Minute, "APIService to notice the apiserver is gone", func() bool {
		out, _, _ := kubectl(t, "", "get", "apiservice", "v1alpha2.operator.example.com", "-o", "jsonpath={.status.conditions[?(@.type=='Available')].status}")
		return out == "False"
	})

	ready := restart()
	// Measured and logged, not judged: this machine's speed varies too much for a threshold.
	waitFor(t, 2*time.Minute, "both APIServices Available after /readyz", apiServicesAvailable(t))
	t.Logf("APIServices Available %s after our apiserver became ready", time.Since(ready).Round(100*time.Millisecond))
	mustKubectl(t, "", "get", "nginxoperators", "-A")
}

func waitFor(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	framework.WaitFor(t, timeout, what, done)
}
