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

package deploy

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// nginxMetricsFollowLoad: with the prometheus overlay's PodMonitor, Prometheus scrapes the
// nginx-exporter sidecar of every pod of an NginxOperator (nginx_up: stub_status answers in
// each), and nginx_http_requests_total follows a bounded load sent through its Service.
// api is the Prometheus HTTP API's base URL.
func nginxMetricsFollowLoad(t *testing.T, api string) {
	const ns, name, replicas, requests = "nginx-metrics", "metered", 2, 300
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, fmt.Sprintf(`{"apiVersion": "operator.example.com/v1alpha2", "kind": "NginxOperator",
	  "metadata": {"name": %q, "namespace": %q}, "spec": {"replicas": %d}}`, name, ns, replicas), "apply", "-f", "-")
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=180s", "ngx/"+name)

	// query answers a PromQL expression that yields one sample; ok is false otherwise.
	query := func(expr string) (value float64, ok bool) {
		var result struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		}
		prometheusAPI(t, api+"query?query="+url.QueryEscape(expr), &result)
		if len(result.Result) != 1 {
			return 0, false
		}
		text, _ := result.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(text, 64)
		return v, err == nil
	}
	selector := fmt.Sprintf(`{namespace=%q,nginxoperator=%q}`, ns, name)
	took := waitFor(t, 3*time.Minute, "Prometheus to scrape every pod's exporter, with stub_status answering", func() bool {
		up, ok := query("sum(nginx_up" + selector + ")")
		return ok && up == replicas
	})
	t.Logf("both pods' nginx metrics scraped (nginx_up 1) %s after the NginxOperator was Ready", framework.Describe(took))

	before, ok := query("sum(nginx_http_requests_total" + selector + ")")
	if !ok {
		t.Fatal("no nginx_http_requests_total for the NginxOperator's pods")
	}
	clusterIP := get(t, "get", "service", name, "-n", ns, "-o", "jsonpath={.spec.clusterIP}")
	start := time.Now()
	for i := range requests {
		if _, err := httpGet(clusterIP + ":80"); err != nil {
			t.Fatalf("request %d through the Service: %v", i, err)
		}
	}
	sent := time.Since(start)
	var after float64
	counted := waitFor(t, 3*time.Minute, fmt.Sprintf("nginx_http_requests_total to count the %d requests", requests), func() bool {
		after, _ = query("sum(nginx_http_requests_total" + selector + ")")
		return after-before >= requests
	})
	// The counter also counts what else reaches nginx meanwhile: kubelet's probes and the
	// exporter's own stub_status reads, a few a minute per pod.
	extra := after - before - requests
	t.Logf("%d requests through the Service in %s: the counter rose by %.0f (%.0f from probes and scrapes), in Prometheus %s after the load",
		requests, framework.Describe(sent), after-before, extra, framework.Describe(counted))
	if extra >= requests {
		t.Errorf("nginx_http_requests_total rose by %.0f for %d requests: it does not follow the load", after-before, requests)
	}
}
