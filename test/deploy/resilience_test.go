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
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/test/framework"
)

const apiserverSelector = "app.kubernetes.io/name=nginx-operator-apiserver"

// budgetKeepsOneApiserver evicts both apiserver pods at once, as a node drain would, under
// load: the PodDisruptionBudget lets only the first go until its replacement is Ready, and
// losing that pod costs no request.
func budgetKeepsOneApiserver(t *testing.T) {
	pods := readyPods(t, systemNS, apiserverSelector)
	if len(pods) != 2 {
		t.Fatalf("want 2 Ready apiserver pods, have %v", pods)
	}
	if got := get(t, "get", "pdb", "-n", systemNS, "nginx-operator-apiserver", "-o", "jsonpath={.status.disruptionsAllowed}"); got != "1" {
		t.Fatalf("PodDisruptionBudget allows %q disruptions, want 1", got)
	}
	c := kubeClient(t)
	evict := func(pod string) error {
		return c.PolicyV1().Evictions(systemNS).Evict(context.Background(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: systemNS}})
	}
	underLoad(t, "drain-load", func() {
		if err := evict(pods[0]); err != nil {
			t.Errorf("first eviction: %v", err)
			return
		}
		// The load keeps running whatever happens here, so no t.Fatal.
		if err := evict(pods[1]); err == nil || !strings.Contains(err.Error(), "disruption budget") {
			t.Errorf("second eviction while the first replacement is not Ready: %v, want refused by the disruption budget", err)
		} else {
			t.Logf("second eviction refused: %v", err)
		}
		d := waitFor(t, 3*time.Minute, "2 Ready apiserver pods after the eviction", func() bool {
			now := readyPods(t, systemNS, apiserverSelector)
			return len(now) == 2 && !slices.Contains(now, pods[0])
		})
		t.Logf("evicted %s; 2 apiserver pods Ready again %s later", pods[0], d.Round(100*time.Millisecond))
	})
}

// upgradesWithoutLoss installs the previous release from its own artifacts/ with
// kubectl apply -k, then upgrades to this release as docs/operations.md says, the
// first step (the upgrade-window component) under the read/write loop and a writer
// that asks for spec.contentUpdate and writes status all along.
func upgradesWithoutLoss(t *testing.T, refs map[string]string) {
	previous, previousTree, previousImage := waitPreviousRelease(t)
	image := refs["NGINX_OPERATOR_IMAGE"]
	deploy := func(args ...string) {
		t.Helper()
		start := time.Now()
		if out, err := stack.Script("deploy-to-node.sh", 10*time.Minute, args...); err != nil {
			t.Fatalf("deploy-to-node.sh %v: %v\n%s", args, err, out)
		}
		t.Logf("deploy-to-node.sh %v: %s", args, framework.Describe(time.Since(start)))
	}
	deploy("--artifacts", filepath.Join(previousTree, "artifacts"), previousImage)
	onlyApiserverPods(t, "of "+previous.Version, func(got, _ string) bool { return got == previousImage })
	const ns = "upgrade-fields"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, fieldsTLSSecret, "create", "-n", ns, "-f", "-")
	mustKubectl(t, fieldsObject, "create", "-n", ns, "-f", "-")
	before := specFields(t, ns)

	// deploy-to-node.sh runs hack/deploy-certs.sh again: a renewal of the serving
	// certificate from the same CA, which the APIServices keep trusting.
	caBundle, serial := servingCertificate(t)
	metricsSerial := controllerMetricsSerial(t)
	var writes newFieldWrites
	underLoad(t, "upgrade-load", func() {
		stop := writes.start(t, ns)
		deploy("--component", filepath.Join(stack.RepoRoot, "artifacts", "overlays", "components", "upgrade-window"), image)
		onlyApiserverPods(t, "of this release", func(got, _ string) bool { return got == image })
		// Every replica is new now, and still in the window: each write is answered so.
		waitFor(t, 3*time.Minute, "five writes of spec.contentUpdate answered by the new replicas", func() bool { return writes.warned.Load() >= 5 })
		stop()
	})
	writes.check(t, previous.Version)
	compareFields(t, "after the upgrade", before, specFields(t, ns))
	t.Logf("%d spec fields of %s kept through the upgrade", len(before), previous.Version)
	// The window ends: the base without the component.
	deploy(image)
	newFieldAcceptedAfterTheWindow(t, ns)

	renewedBundle, renewed := servingCertificate(t)
	if renewedBundle != caBundle {
		t.Error("re-running hack/deploy-certs.sh replaced the CA the APIServices trust")
	}
	if renewed == serial {
		t.Errorf("re-running hack/deploy-certs.sh kept the serving certificate %s", serial)
	}
	waitFor(t, 2*time.Minute, "the apiserver to serve the renewed certificate, trusted by the caBundle", func() bool {
		return servedCertificate(t, caBundle) == renewed
	})
	t.Logf("serving certificate renewed from serial %s to %s under the same CA", serial, renewed)
	// And the controller's metrics certificate, from the same CA; every controller pod serves it.
	renewedMetrics := controllerMetricsSerial(t)
	if renewedMetrics == metricsSerial {
		t.Errorf("re-running hack/deploy-certs.sh kept the controller's metrics certificate %s", metricsSerial)
	}
	waitFor(t, 2*time.Minute, "both controller pods to serve the renewed metrics certificate", func() bool {
		pods := readyPods(t, systemNS, "app.kubernetes.io/name=nginx-operator-controller")
		for _, pod := range pods {
			if _, _, served := scrapeControllerPod(t, pod, ""); served != renewedMetrics {
				return false
			}
		}
		return len(pods) == 2
	})
	t.Logf("controller metrics certificate renewed from serial %s to %s", metricsSerial, renewedMetrics)

	// Pods of the old ReplicaSets may still be terminating; the ones that stay must run
	// the new image. Selected by name: the backup CronJob's pods (it runs at 17 past every
	// sixth hour) carry the operator image too, and one may be running now.
	out := get(t, "get", "pods", "-n", systemNS, "-l", "app.kubernetes.io/name in (nginx-operator-apiserver,nginx-operator-controller)",
		"-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.containers[0].image} {.metadata.deletionTimestamp}{"\n"}{end}`)
	running := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			running++
			if f[1] != image {
				t.Errorf("pod %s runs %s after the upgrade to %s", f[0], f[1], image)
			}
		}
	}
	if running != 4 {
		t.Errorf("%d apiserver and controller pods after the upgrade, want 4:\n%s", running, out)
	}
}
