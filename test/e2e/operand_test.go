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

// TestOperandPlacementAndIdentity sends every pod, PodDisruptionBudget and Service option
// through kube-apiserver: the Deployment, PodDisruptionBudget and Service the controller
// builds from them are valid there (our validation covers only the mistakes a user is
// likely to make), the scheduler places the pods by them on the kwok nodes, and a dropped
// PodDisruptionBudget is deleted.
func TestOperandPlacementAndIdentity(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() {
		kubectl(t, "", "delete", "ngx", "placed", "--ignore-not-found")
		kubectl(t, "", "delete", "priorityclass", "ngx-e2e-high", "--ignore-not-found")
	})
	start := time.Now()
	mustKubectl(t, `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: ngx-e2e-high}
value: 1000
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: placed, namespace: default}
spec:
  replicas: 3
  healthcheckPath: /healthz
  pod:
    labels: {team: web}
    annotations: {example.com/owner: web-team}
    nodeSelector: {type: kwok}
    tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: NotIn, values: [kwok-node-3]}]}]
      podAntiAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 50
          podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app.kubernetes.io/instance: placed}}}
    topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]
    priorityClassName: ngx-e2e-high
    imagePullSecrets: [{name: registry}]
    serviceAccountName: default
  podDisruptionBudget: {maxUnavailable: 1}
  service:
    type: LoadBalancer
    labels: {exposed: "yes"}
    annotations: {lb.example.com/internal: "true"}
    externalTrafficPolicy: Local
    loadBalancerSourceRanges: [10.0.0.0/8]
`, "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=120s", "ngx/placed")
	t.Logf("Ready after %s", time.Since(start).Round(100*time.Millisecond))

	// Three pods on three distinct nodes, none on kwok-node-3, with the priority and labels.
	pods := get(t, "get", "pods", "-l", "app.kubernetes.io/instance=placed", "-o",
		`jsonpath={range .items[*]}{.spec.nodeName} {.spec.priority} {.metadata.labels.team} {.metadata.annotations.example\.com/owner}{"\n"}{end}`)
	nodes := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(pods), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] == "kwok-node-3" || f[1] != "1000" || f[2] != "web" || f[3] != "web-team" {
			t.Errorf("pod: %q", line)
			continue
		}
		nodes[f[0]] = true
	}
	if len(nodes) != 3 {
		t.Errorf("pods on %d nodes, want 3 (spread, one per node, not kwok-node-3):\n%s", len(nodes), pods)
	}
	if got := get(t, "get", "deployment", "placed", "-o",
		`jsonpath={.spec.template.spec.imagePullSecrets[0].name} {.spec.template.spec.serviceAccountName} {.spec.template.spec.containers[0].readinessProbe.httpGet.path} {.spec.template.spec.topologySpreadConstraints[0].labelSelector.matchLabels.app\.kubernetes\.io/instance}`); got != "registry default /healthz placed" {
		t.Errorf("Deployment: %q", got)
	}
	if got := get(t, "get", "pdb", "placed", "-o", "jsonpath={.spec.maxUnavailable} {.status.expectedPods}"); got != "1 3" {
		t.Errorf("PodDisruptionBudget: %q", got)
	}
	if got := get(t, "get", "service", "placed", "-o",
		`jsonpath={.spec.type} {.metadata.labels.exposed} {.metadata.annotations.lb\.example\.com/internal} {.spec.externalTrafficPolicy} {.spec.loadBalancerSourceRanges[0]}`); got != "LoadBalancer yes true Local 10.0.0.0/8" {
		t.Errorf("Service: %q", got)
	}

	// No PodDisruptionBudget asked for: the controller deletes its own.
	mustKubectl(t, "", "patch", "ngx", "placed", "--type=json", "-p", `[{"op":"remove","path":"/spec/podDisruptionBudget"}]`)
	kc.WaitForOutput(t, 3*time.Minute, "", "get", "pdb", "-l", "app.kubernetes.io/instance=placed", "-o", "name")
}
