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
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// get returns a jsonpath of an object, or "" when it cannot be read.
func get(t *testing.T, args ...string) string {
	t.Helper()
	return kc.Get(t, args...)
}

func TestControllerReconcilesDeploymentAndService(t *testing.T) {
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "shop", "--ignore-not-found", "--wait=false") })
	mustKubectl(t, `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: shop, namespace: default}
spec:
  replicas: 2
  ports: [{name: http, containerPort: 8080}]
  service: {type: NodePort, ports: [{name: http, port: 80, nodePort: 30090}]}
`, "apply", "-f", "-")

	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "ngx/shop")
	kc.WaitForOutput(t, 3*time.Minute, "2 2 2", "get", "ngx", "shop", "-o", "jsonpath={.spec.replicas} {.status.readyReplicas} {.status.availableReplicas}")
	if got := get(t, "get", "deployment", "shop", "-o", "jsonpath={.status.readyReplicas} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].controller}"); got != "2 NginxOperator true" {
		t.Errorf("deployment = %q", got)
	}
	if got := get(t, "get", "service", "shop", "-o", "jsonpath={.spec.type} {.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.ports[0].nodePort}"); got != "NodePort 80 http 30090" {
		t.Errorf("service = %q", got)
	}
	clusterIP := get(t, "get", "service", "shop", "-o", "jsonpath={.spec.clusterIP}")
	if got := get(t, "get", "ngx", "shop", "-o", "jsonpath={.status.observedGeneration} {.status.selector}"); got != "1 app.kubernetes.io/instance=shop,app.kubernetes.io/name=nginx" {
		t.Errorf("status = %q", got)
	}

	t.Run("spec changes reach the Deployment and the Service", func(t *testing.T) {
		mustKubectl(t, "", "patch", "ngx", "shop", "--type", "merge", "-p",
			`{"spec":{"replicas":3,"image":"nginx:1.26","ports":[{"name":"http","containerPort":8080},{"name":"admin","containerPort":9000}],"service":{"type":"ClusterIP","ports":[{"name":"http","port":80,"nodePort":null},{"name":"admin","port":9000}]}}}`)
		kc.WaitForOutput(t, 3*time.Minute, "3 nginx:1.26 8080,9000", "get", "deployment", "shop", "-o",
			`jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort},{.spec.template.spec.containers[0].ports[1].containerPort}`)
		kc.WaitForOutput(t, 3*time.Minute, "ClusterIP 80,9000 "+clusterIP, "get", "service", "shop", "-o", "jsonpath={.spec.type} {.spec.ports[0].port},{.spec.ports[1].port} {.spec.clusterIP}")
		kc.WaitForOutput(t, 90*time.Second, "3", "get", "ngx", "shop", "-o", "jsonpath={.status.readyReplicas}")
	})

	t.Run("kubectl scale on the NginxOperator", func(t *testing.T) {
		mustKubectl(t, "", "scale", "ngx", "shop", "--replicas", "4")
		kc.WaitForOutput(t, 3*time.Minute, "4", "get", "deployment", "shop", "-o", "jsonpath={.spec.replicas}")
		kc.WaitForOutput(t, 90*time.Second, "4", "get", "ngx", "shop", "-o", "jsonpath={.status.readyReplicas}")
	})

	t.Run("manual drift is reverted, foreign fields stay", func(t *testing.T) {
		mustKubectl(t, "", "scale", "deployment", "shop", "--replicas", "7")
		mustKubectl(t, "", "annotate", "deployment", "shop", "team=edge")
		mustKubectl(t, "", "patch", "service", "shop", "--type", "json", "-p", `[{"op":"replace","path":"/spec/ports/0/port","value":81}]`)
		mustKubectl(t, "", "patch", "service", "shop", "--type", "merge", "-p", `{"spec":{"type":"LoadBalancer"}}`)
		kc.WaitForOutput(t, 3*time.Minute, "4 edge", "get", "deployment", "shop", "-o", `jsonpath={.spec.replicas} {.metadata.annotations.team}`)
		kc.WaitForOutput(t, 3*time.Minute, "ClusterIP 80,9000", "get", "service", "shop", "-o", `jsonpath={.spec.type} {.spec.ports[0].port},{.spec.ports[1].port}`)
	})

	t.Run("forceRedeploy rolls the pods", func(t *testing.T) {
		before := get(t, "get", "replicasets", "-l", "app.kubernetes.io/instance=shop", "-o", "name")
		mustKubectl(t, "", "patch", "ngx", "shop", "--type", "merge", "-p", `{"spec":{"forceRedeploy":"rollout-1"}}`)
		kc.WaitForOutput(t, 3*time.Minute, "rollout-1", "get", "deployment", "shop", "-o", `jsonpath={.spec.template.metadata.annotations.operator\.example\.com/force-redeploy}`)
		waitFor(t, 90*time.Second, "a new ReplicaSet", func() bool {
			after := get(t, "get", "replicasets", "-l", "app.kubernetes.io/instance=shop", "-o", "name")
			return len(strings.Fields(after)) > len(strings.Fields(before))
		})
		mustKubectl(t, "", "rollout", "status", "deployment/shop", "--timeout", "90s")
	})

	// A reconcile of an object whose children match it writes nothing: neither the
	// children nor status. A label on the NginxOperator causes one without changing what it
	// asks for. Right after the rollout a write may still be due (a pod turned ready), so
	// the check is repeated until one reconcile passes with no write, for at most a minute.
	t.Run("a reconcile at steady state writes nothing; metrics count reconciles", func(t *testing.T) {
		mustKubectl(t, "", "wait", "--for", "condition=Progressing=False", "--timeout", "90s", "ngx/shop")
		versions := func() string {
			return get(t, "get", "deployment/shop", "service/shop", "-o", "jsonpath={.items[*].metadata.resourceVersion}")
		}
		reconciles := func() float64 { return controllerMetric(t, `nginx_operator_reconciles_total{result="success"}`) }
		var attempts int
		var lastVersions, lastWrites string
		waitFor(t, 3*time.Minute, "a reconcile that writes nothing", func() bool {
			attempts++
			beforeVersions, beforeWrites, beforeReconciles := versions(), controllerMetric(t, "nginx_operator_writes_total"), reconciles()
			mustKubectl(t, "", "label", "--overwrite", "ngx", "shop", fmt.Sprintf("touched=%d", attempts))
			waitFor(t, 30*time.Second, "the label's reconcile to be counted", func() bool { return reconciles() > beforeReconciles })
			afterVersions, afterWrites := versions(), controllerMetric(t, "nginx_operator_writes_total")
			lastVersions, lastWrites = beforeVersions+" -> "+afterVersions, fmt.Sprint(beforeWrites, " -> ", afterWrites)
			return beforeVersions == afterVersions && beforeWrites == afterWrites
		})
		t.Logf("a reconcile wrote nothing at attempt %d (children's resourceVersions %s, writes %s)", attempts, lastVersions, lastWrites)
		if n := controllerMetric(t, `nginx_operator_instances{condition="Available",status="True"}`); n < 1 {
			t.Errorf("nginx_operator_instances{Available=True} = %v", n)
		}
	})

	t.Run("delete removes the children through the garbage collector", func(t *testing.T) {
		mustKubectl(t, "", "delete", "ngx", "shop")
		waitFor(t, 90*time.Second, "Deployment and Service shop to be gone", func() bool {
			out, _, _ := kubectl(t, "", "get", "deployment/shop", "service/shop", "--ignore-not-found", "-o", "name")
			return strings.TrimSpace(out) == ""
		})
	})
}

func TestControllerQPSMode(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "qps", "--ignore-not-found", "--wait=false") })
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: qps, namespace: default}\nspec: {qps: {singlePodQPS: 800, totalQPS: 2400}}\n", "apply", "-f", "-")
	kc.WaitForOutput(t, 3*time.Minute, "3", "get", "deployment", "qps", "-o", "jsonpath={.spec.replicas}")
	kc.WaitForOutput(t, 90*time.Second, "3 2400", "get", "ngx", "qps", "-o", "jsonpath={.status.readyReplicas} {.status.realQPS}")
	mustKubectl(t, "", "patch", "ngx", "qps", "--type", "merge", "-p", `{"spec":{"qps":{"totalQPS":0}}}`)
	kc.WaitForOutput(t, 3*time.Minute, "0", "get", "deployment", "qps", "-o", "jsonpath={.spec.replicas}")
	kc.WaitForOutput(t, 90*time.Second, "0", "get", "ngx", "qps", "-o", "jsonpath={.status.realQPS}")
}

func TestControllerNeverTakesOverForeignObjects(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() {
		kubectl(t, "", "delete", "ngx", "taken", "--ignore-not-found", "--wait=false")
		kubectl(t, "", "delete", "deployment", "taken", "--ignore-not-found", "--wait=false")
	})
	mustKubectl(t, "", "create", "deployment", "taken", "--image", "busybox", "--replicas", "1")
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: taken, namespace: default}\n", "apply", "-f", "-")
	kc.WaitForOutput(t, 3*time.Minute, "True OperatorResourceNotAvailable", "get", "ngx", "taken", "-o",
		`jsonpath={.status.conditions[?(@.type=="OperatorDegraded")].status} {.status.conditions[?(@.type=="OperatorDegraded")].reason}`)
	if got := get(t, "get", "deployment", "taken", "-o", "jsonpath={.spec.template.spec.containers[0].image} {.metadata.ownerReferences}"); got != "busybox " {
		t.Errorf("the foreign Deployment was touched: %q", got)
	}
	waitFor(t, 30*time.Second, "a Warning OwnershipConflict event", func() bool {
		out := get(t, "get", "events", "--field-selector", "involvedObject.name=taken,type=Warning", "-o", "jsonpath={.items[*].reason}")
		return strings.Contains(out, "OwnershipConflict")
	})
	// Once the stranger is gone, the NginxOperator gets its own Deployment.
	mustKubectl(t, "", "delete", "deployment", "taken")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "ngx/taken")
}

// controllerMetric sums a series (name{label="value",...}) of the running controller's
// /metrics.
func controllerMetric(t *testing.T, series string) float64 {
	t.Helper()
	return controllerMetricAt(t, ports["CONTROLLER_METRICS_PORT"], series)
}

// controllerMetricAt sums a series of the /metrics of the controller serving on port.
func controllerMetricAt(t *testing.T, port int, series string) float64 {
	t.Helper()
	code, body := scrapeController(t, port, scraperToken(t))
	if code != http.StatusOK {
		t.Fatalf("scraping the controller: %d %.300s", code, body)
	}
	return metricSum(t, body, series)
}

// metricSum sums a series of a /metrics page.
func metricSum(t *testing.T, page, series string) float64 {
	t.Helper()
	metrics, err := framework.ParseMetrics([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := metrics.Sum(series)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
