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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// Children the cluster refuses must show in status, be retried with backoff (measured
// once, for Deployments: every kind goes through the same workqueue), and recover by
// themselves once the obstacle is gone.

const degradedPath = `jsonpath={.status.conditions[?(@.type=="OperatorDegraded")].status} {.status.conditions[?(@.type=="OperatorDegraded")].reason}`

func conditionField(t *testing.T, name, condition, field string) string {
	t.Helper()
	return get(t, "get", "ngx", name, "-o", fmt.Sprintf(`jsonpath={.status.conditions[?(@.type==%q)].%s}`, condition, field))
}

// TestControllerReportsARefusedService: a nodePort another Service holds cannot be
// validated in advance; the Service is refused, the Deployment serves anyway.
func TestControllerReportsARefusedService(t *testing.T) {
	t.Parallel()
	const nodePort = 30123
	t.Cleanup(func() {
		kubectl(t, "", "delete", "ngx", "port-wanted", "--ignore-not-found", "--wait=false")
		kubectl(t, "", "delete", "service", "port-holder", "--ignore-not-found", "--wait=false")
	})
	mustKubectl(t, "", "create", "service", "nodeport", "port-holder", "--tcp=80:80", fmt.Sprintf("--node-port=%d", nodePort))
	mustKubectl(t, fmt.Sprintf(`apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: port-wanted, namespace: default}
spec:
  service: {type: NodePort, ports: [{name: http, port: 80, nodePort: %d}]}
`, nodePort), "apply", "-f", "-")

	took := kc.WaitForOutput(t, 90*time.Second, "True OperandServiceFailed", "get", "ngx", "port-wanted", "-o", degradedPath)
	t.Logf("OperatorDegraded=True OperandServiceFailed %s after create", took.Round(100*time.Millisecond))
	if msg := conditionField(t, "port-wanted", "OperatorDegraded", "message"); !strings.Contains(msg, "provided port is already allocated") {
		t.Errorf("OperatorDegraded message %q does not carry the server's", msg)
	}
	// The Deployment does not depend on the Service: it rolls out and serves.
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "ngx/port-wanted")
	if got := get(t, "get", "ngx", "port-wanted", "-o", degradedPath); got != "True OperandServiceFailed" {
		t.Errorf("with the Deployment available, OperatorDegraded = %q; the Service is still missing", got)
	}

	// Freeing the port is no event the controller watches: the backed-off retry finds it.
	mustKubectl(t, "", "delete", "service", "port-holder")
	took = kc.WaitForOutput(t, 3*time.Minute, "False OperatorSucceeded", "get", "ngx", "port-wanted", "-o", degradedPath)
	t.Logf("recovered %s after the port was freed", took.Round(100*time.Millisecond))
	if got := get(t, "get", "service", "port-wanted", "-o", "jsonpath={.spec.ports[0].nodePort}"); got != strconv.Itoa(nodePort) {
		t.Errorf("service nodePort = %q", got)
	}
}

const (
	refusedImage = "registry.invalid/refused:1"
	policyName   = "nginx-operator-e2e-refuse-image"
	policyText   = "nginx-operator e2e refuses image " + refusedImage
)

var refusePolicy = fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %[1]s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.template.spec.containers.all(c, c.image != '%[2]s')"
    message: "%[3]s"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [Deny]
`, policyName, refusedImage, policyText)

// TestControllerReportsARefusedDeploymentAndBacksOff: an admission policy refuses the
// new Deployment; the old one keeps serving, retries back off, and removing the policy
// lets the retry through.
func TestControllerReportsARefusedDeploymentAndBacksOff(t *testing.T) {
	t.Cleanup(func() {
		kubectl(t, refusePolicy, "delete", "--ignore-not-found", "-f", "-")
		kubectl(t, "", "delete", "ngx", "refused", "--ignore-not-found", "--wait=false")
	})
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: refused, namespace: default}\nspec: {replicas: 2}\n", "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "ngx/refused")

	mustKubectl(t, refusePolicy, "apply", "-f", "-")
	waitFor(t, 3*time.Minute, "the admission policy to be enforced", func() bool {
		_, errOut, err := kubectl(t, "", "create", "deployment", "policy-probe", "--image", refusedImage, "--dry-run=server")
		return err != nil && strings.Contains(errOut, policyText)
	})

	mustKubectl(t, "", "patch", "ngx", "refused", "--type", "merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, refusedImage))
	took := kc.WaitForOutput(t, 90*time.Second, "True OperandDeploymentFailed", "get", "ngx", "refused", "-o", degradedPath)
	t.Logf("OperatorDegraded=True OperandDeploymentFailed %s after the patch", took.Round(100*time.Millisecond))
	if msg := conditionField(t, "refused", "OperatorDegraded", "message"); !strings.Contains(msg, policyText) {
		t.Errorf("OperatorDegraded message %q does not carry the policy's", msg)
	}
	if got := conditionField(t, "refused", "Available", "status"); got != "True" {
		t.Errorf("Available = %q; the Deployment of the previous spec still serves", got)
	}

	// Both sides count the attempts: the policy's denials and the controller's failed writes.
	// A retry comes. Its delay is the item's backoff, or longer while the workqueue's
	// overall rate limit (10/s after a burst of 100) is spent by other objects, as after a
	// test that converged hundreds: so it is waited for, not expected inside a window.
	deniedBefore := policyDenials(t)
	failedBefore := controllerMetric(t, `nginx_operator_write_errors_total{kind="Deployment"}`)
	took = framework.WaitFor(t, 3*time.Minute, "a retry of the refused Deployment", func() bool {
		return policyDenials(t) > deniedBefore &&
			controllerMetric(t, `nginx_operator_write_errors_total{kind="Deployment"}`) > failedBefore
	})
	t.Logf("a retry denied and counted %s after the first refusal was reported", took.Round(100*time.Millisecond))
	// Retries double from 5ms up to the longest delay (maxRetryDelay in this suite), so a
	// window of three such delays sees at most the dozen of the ramp plus three; a hot loop
	// would make hundreds. Other kinds of refused children go through the same workqueue:
	// their tests check only status and recovery.
	window := 3 * maxRetryDelay
	deniedBefore = policyDenials(t)
	failedBefore = controllerMetric(t, `nginx_operator_write_errors_total{kind="Deployment"}`)
	time.Sleep(window) // a fixed period: its length, from the controller's setting, is the point
	denied := policyDenials(t) - deniedBefore
	failed := controllerMetric(t, `nginx_operator_write_errors_total{kind="Deployment"}`) - failedBefore
	t.Logf("over %s (--max-retry-delay %s): %v applies denied by the policy, %v failed Deployment writes counted by the controller", window, maxRetryDelay, denied, failed)
	framework.Measure(t, "controller-backoff").Value("retries-in-window", failed, "retries",
		fmt.Sprintf("failed writes of a refused Deployment the controller counted over %s (three periods of --max-retry-delay %s)", window, maxRetryDelay))
	if denied > 20 || failed > 20 {
		t.Errorf("want at most 20 retries in %s, got %v denials and %v failed writes", window, denied, failed)
	}

	mustKubectl(t, refusePolicy, "delete", "-f", "-")
	took = kc.WaitForOutput(t, 3*time.Minute, "False OperatorSucceeded", "get", "ngx", "refused", "-o", degradedPath)
	t.Logf("recovered %s after the policy was removed", took.Round(100*time.Millisecond))
	if got := get(t, "get", "deployment", "refused", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != refusedImage {
		t.Errorf("deployment image = %q", got)
	}
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "ngx/refused")
}

// TestControllerReportsExceededQuotaAndBacksOff: a ResourceQuota allows no Deployment in
// the namespace; the controller reports the quota's message, retries with backoff, and
// recovers once the quota is gone.
func TestControllerReportsExceededQuotaAndBacksOff(t *testing.T) {
	t.Parallel()
	const ns = "e2e-quota"
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--wait=false") })
	mustKubectl(t, "", "create", "namespace", ns)
	mustKubectl(t, "", "create", "quota", "no-deployments", "-n", ns, "--hard=count/deployments.apps=0")
	// Admission judges against the quota's status, which kube-controller-manager fills in.
	kc.WaitForOutput(t, 3*time.Minute, "0", "get", "quota", "no-deployments", "-n", ns, "-o", "jsonpath={.status.hard.count/deployments\\.apps}")

	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: over-quota, namespace: "+ns+"}\n", "apply", "-f", "-")
	took := kc.WaitForOutput(t, 90*time.Second, "True OperandDeploymentFailed", "get", "ngx", "over-quota", "-n", ns, "-o", degradedPath)
	t.Logf("OperatorDegraded=True OperandDeploymentFailed %s after create", took.Round(100*time.Millisecond))
	msg := get(t, "get", "ngx", "over-quota", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="OperatorDegraded")].message}`)
	t.Logf("OperatorDegraded message: %s", msg)
	if !strings.Contains(msg, "exceeded quota: no-deployments") {
		t.Errorf("OperatorDegraded message %q does not carry the quota's", msg)
	}

	mustKubectl(t, "", "delete", "quota", "no-deployments", "-n", ns)
	took = kc.WaitForOutput(t, 3*time.Minute, "False OperatorSucceeded", "get", "ngx", "over-quota", "-n", ns, "-o", degradedPath)
	t.Logf("recovered %s after the quota was removed", took.Round(100*time.Millisecond))
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "-n", ns, "ngx/over-quota")
}

// kubeAPIServerMetric sums the samples of a kube-apiserver metric whose labels contain
// every match.
func kubeAPIServerMetric(t *testing.T, metric string, matches ...string) float64 {
	t.Helper()
	return prometheusSample(t, mustKubectl(t, "", "get", "--raw", "/metrics"), metric, matches...)
}

// policyDenials reads kube-apiserver's count of requests the test policy denied.
func policyDenials(t *testing.T) float64 {
	t.Helper()
	return kubeAPIServerMetric(t, "apiserver_validating_admission_policy_check_total", `policy="`+policyName+`"`, `enforcement_action="deny"`)
}

// TestValidationRefusesWhatTheClusterWould: the example of the issue never reaches
// the controller any more.
func TestValidationRefusesWhatTheClusterWould(t *testing.T) {
	t.Parallel()
	_, errOut, err := kubectl(t, `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: bad-fieldref, namespace: default}
spec:
  env: [{name: X, valueFrom: {fieldRef: {fieldPath: not.a.field}}}]
`, "apply", "-f", "-")
	if err == nil {
		kubectl(t, "", "delete", "ngx", "bad-fieldref", "--ignore-not-found", "--wait=false")
		t.Fatal("an env fieldRef kube-apiserver refuses was accepted")
	}
	if !strings.Contains(errOut, "spec.env[0].valueFrom.fieldRef.fieldPath") || !strings.Contains(errOut, "Unsupported value") {
		t.Errorf("error does not name our field: %s", errOut)
	}
}

// TestControllerIgnoresUnrelatedObjects: Deployments and Services the controller did
// not create are neither cached nor reconciled.
func TestControllerIgnoresUnrelatedObjects(t *testing.T) {
	t.Cleanup(func() {
		kubectl(t, "", "delete", "deployment,service", "unrelated", "--ignore-not-found", "--wait=false")
	})
	reconciles := func() (float64, float64) {
		return controllerMetric(t, "controller_runtime_reconcile_total"), controllerMetric(t, "nginx_operator_reconciles_total")
	}
	// Let reconciles caused by earlier tests settle first; quiet for longer than a
	// blocked NginxOperator's recheck interval (10s) means none is left.
	quietSince, lastAll, lastOurs := time.Now(), -1.0, -1.0
	waitFor(t, 3*time.Minute, "reconciles to stop", func() bool {
		all, ours := reconciles()
		if all != lastAll || ours != lastOurs {
			quietSince, lastAll, lastOurs = time.Now(), all, ours
		}
		return time.Since(quietSince) > 12*time.Second
	})

	mustKubectl(t, "", "create", "deployment", "unrelated", "--image", "nginx", "--replicas", "2")
	mustKubectl(t, "", "create", "service", "clusterip", "unrelated", "--tcp=80:80")
	mustKubectl(t, "", "rollout", "status", "deployment/unrelated", "--timeout", "90s")
	mustKubectl(t, "", "scale", "deployment", "unrelated", "--replicas", "3")
	mustKubectl(t, "", "rollout", "status", "deployment/unrelated", "--timeout", "90s")
	mustKubectl(t, "", "label", "service", "unrelated", "touched=yes")
	// Nothing marks that the controller ignored an event: give the last one the few seconds
	// a watch event takes to arrive (the rollouts above already gave the earlier ones more).
	time.Sleep(3 * time.Second)

	all, ours := reconciles()
	t.Logf("reconciles while an unrelated Deployment rolled out and scaled: controller-runtime %v -> %v, ours %v -> %v", lastAll, all, lastOurs, ours)
	if all != lastAll || ours != lastOurs {
		t.Errorf("unrelated objects caused reconciles: controller_runtime_reconcile_total %v -> %v, nginx_operator_reconciles_total %v -> %v", lastAll, all, lastOurs, ours)
	}
}
