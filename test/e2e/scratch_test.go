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

// TestScratchVolumes: spec.scratch reaches the Deployment as emptyDir volumes with their
// size limits, counted in the nginx container's resources, and the scheduler counts them:
// the kwok nodes advertise no ephemeral storage, so a pod with a scratch volume on disk
// is placed nowhere and status (and nginx_operator_stalled) says why, while one in memory
// runs. A volume without a size limit is refused at the door.
func TestScratchVolumes(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "scratch", "--ignore-not-found", "--wait=false") })
	const manifest = `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: scratch, namespace: default}
spec:
  replicas: 1
  resources: {limits: {memory: 128Mi}}
  scratch:
  - {name: cache, mountPath: /var/cache/nginx/proxy, sizeLimit: 1Gi}
  - {name: tmp, mountPath: /tmp, medium: Memory%s}
`
	_, errOut, err := kubectl(t, strings.Replace(manifest, "%s", "", 1), "create", "--dry-run=server", "-f", "-")
	if err == nil || !strings.Contains(errOut, "spec.scratch[1].sizeLimit: Required value") {
		t.Fatalf("a scratch volume without sizeLimit: err %v, %s", err, errOut)
	}

	start := time.Now()
	mustKubectl(t, strings.Replace(manifest, "%s", ", sizeLimit: 64Mi", 1), "apply", "-f", "-")
	// Selected by name: other volumes of the controller's (metrics) may come and go.
	const podSpec = `jsonpath={.spec.template.spec.volumes[?(@.name=="scratch-cache")].emptyDir} ` +
		`{.spec.template.spec.volumes[?(@.name=="scratch-tmp")].emptyDir} ` +
		`{.spec.template.spec.containers[0].volumeMounts[?(@.name=="scratch-cache")].mountPath} ` +
		`{.spec.template.spec.containers[0].volumeMounts[?(@.name=="scratch-tmp")].mountPath} ` +
		`{.spec.template.spec.containers[0].resources.requests.ephemeral-storage} {.spec.template.spec.containers[0].resources.requests.memory} ` +
		`{.spec.template.spec.containers[0].resources.limits.memory} {.spec.template.spec.containers[0].resources.limits.ephemeral-storage}`
	kc.WaitForOutput(t, 3*time.Minute, `{"sizeLimit":"1Gi"} {"medium":"Memory","sizeLimit":"64Mi"} /var/cache/nginx/proxy /tmp 1Gi 192Mi 192Mi `,
		"get", "deployment", "scratch", "-o", podSpec)

	kc.WaitForOutput(t, 90*time.Second, "True PodsUnschedulable", "get", "ngx", "scratch", "-o",
		`jsonpath={.status.conditions[?(@.type=="Stalled")].status} {.status.conditions[?(@.type=="Stalled")].reason}`)
	if msg := get(t, "get", "ngx", "scratch", "-o", `jsonpath={.status.conditions[?(@.type=="Stalled")].message}`); !strings.Contains(msg, "Insufficient ephemeral-storage") {
		t.Errorf("Stalled message %q does not say the nodes lack ephemeral storage", msg)
	}
	t.Logf("unschedulable for want of ephemeral storage after %s", time.Since(start).Round(100*time.Millisecond))
	// The controller reports the stall per NginxOperator (the alert NginxOperatorConfigurationRejected
	// reads the same series for its reasons).
	const stalled = `nginx_operator_stalled{namespace="default",name="scratch",reason="PodsUnschedulable"}`
	waitFor(t, 30*time.Second, stalled+" = 1", func() bool { return controllerMetric(t, stalled) == 1 })

	// Only the tmpfs left: its 64Mi is memory, which the nodes have.
	mustKubectl(t, "", "patch", "ngx", "scratch", "--type=json", "-p", `[{"op":"remove","path":"/spec/scratch/0"}]`)
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=120s", "ngx/scratch")
	waitFor(t, 30*time.Second, "no "+stalled, func() bool { return controllerMetric(t, `nginx_operator_stalled{name="scratch"}`) == 0 })
	kc.WaitForOutput(t, 30*time.Second, `{"medium":"Memory","sizeLimit":"64Mi"} 192Mi |`, "get", "pods", "-l", "app.kubernetes.io/instance=scratch", "-o",
		`jsonpath={range .items[*]}{.spec.volumes[?(@.name=="scratch-cache")].emptyDir}{.spec.volumes[?(@.name=="scratch-tmp")].emptyDir} `+
			`{.spec.containers[0].resources.requests.memory} {.spec.containers[0].resources.requests.ephemeral-storage}|{end}`)
}
