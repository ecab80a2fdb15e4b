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
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

// fieldsObject sets every spec field the previous release knows; replicas 0, so that
// the ConfigMaps it mounts need not exist. Created as "fields" in a namespace of the
// test's, beside fieldsTLSSecret: a missing Secret in spec.tls keeps the controller from
// updating the Deployment (as one of another type does), which would then not follow the
// upgrade.
const fieldsObject = `{"apiVersion": "operator.example.com/v1alpha2", "kind": "NginxOperator",
 "metadata": {"name": "fields", "labels": {"tier": "edge"}, "annotations": {"team": "web"}},
 "spec": {"image": "registry.example.com/nginx:1.27", "replicas": 0, "forceRedeploy": "2026-11-26",
  "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
  "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
  "env": [{"name": "MODE", "value": "prod"}],
  "service": {"type": "ClusterIP", "ports": [{"name": "http", "port": 80}], "labels": {"expose": "yes"}, "annotations": {"note": "edge"}},
  "config": {"configMapKeyRef": {"name": "site", "key": "nginx.conf"}},
  "files": [{"configMapName": "pages", "mountPath": "/usr/share/nginx/html"}],
  "tls": [{"secretName": "site-tls"}], "healthcheckPath": "/healthz",
  "securityContext": {"runAsUser": 101, "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true},
  "pod": {"labels": {"pod": "label"}, "annotations": {"pod": "annotation"}, "nodeSelector": {"kubernetes.io/os": "linux"},
   "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
   "securityContext": {"runAsNonRoot": true, "fsGroup": 101}},
  "podDisruptionBudget": {"maxUnavailable": 1},
  "scratch": [{"name": "cache", "mountPath": "/var/cache/nginx", "sizeLimit": "64Mi"}],
  "metrics": {"enabled": true}}}`

// fieldsTLSSecret is the Secret fieldsObject's spec.tls names; nothing reads its keys.
const fieldsTLSSecret = `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "site-tls"}, "type": "kubernetes.io/tls",
 "stringData": {"tls.crt": "not read", "tls.key": "not read"}}`

// upgradeAcrossReleases upgrades the Helm release from the previous release to this one,
// cut as a release and pushed to a registry on loopback (registryRelease): the chart from
// oci://, every image pulled from there by digest. It does so as docs/operations.md says,
// under the read/write loop and a writer that asks for spec.contentUpdate (new in this
// release) and writes status all along: first with the new replicas emulating the
// previous release, then without; then rolls back.
func upgradeAcrossReleases(t *testing.T, release framework.Release, runHelm func(args ...string) string, previousImage string) {
	previous, previousMinor := release.Version, release.MajorMinor()
	chart, version, images, caFile := waitRegistryRelease(t)
	fromRegistry := []string{chart, "--version", strings.TrimPrefix(version, "v"), "--ca-file", caFile, "--namespace", systemNS, "--wait", "--timeout", "5m"}
	image, exporterImage, etcdImage := images["nginx-operator"], images["nginx-exporter"], images["etcd"]
	mustKubectl(t, fieldsTLSSecret, "create", "-n", "kept", "-f", "-")
	mustKubectl(t, fieldsObject, "create", "-n", "kept", "-f", "-")
	before := specFields(t, "kept")

	// etcd rolls too, to the release's etcd image, its leader's pod included: another
	// member takes over (a later term) and, under the loop, no acknowledged write is lost.
	// This is also the suite's test of an etcd rolling restart.
	leader, term := etcdLeader(t)
	var writes newFieldWrites
	upgrade := framework.Measure(t, "release-upgrade-rolls-etcd")
	load := underLoad(t, "helm-upgrade-load", func() {
		stop := writes.start(t, "kept")
		start := time.Now()
		// The release's values pin every image by tag@digest; only the registry is ours.
		runHelm(append([]string{"upgrade", "nginx-operator"}, append(fromRegistry,
			"--set", "image.repository="+strings.Split(image, "@")[0], "--set", "exporterImage.repository="+strings.Split(exporterImage, "@")[0],
			"--set", "etcd.image.repository="+strings.Split(etcdImage, "@")[0],
			"--set", "apiserver.emulatedVersion="+previousMinor)...)...)
		// Every replica is new now, and still in the window: each write is answered so.
		waitFor(t, 3*time.Minute, "five writes of spec.contentUpdate answered by the new replicas", func() bool { return writes.warned.Load() >= 5 })
		stop()
		upgrade.Duration("upgrade", time.Since(start), "helm upgrade to this release under load, every etcd member rolled, the leader's pod included")
		t.Logf("upgraded from %s to %s emulating %s in %s", previous, image, previousMinor, framework.Describe(time.Since(start)))
	})
	load.record(upgrade, "load")
	writes.check(t, previous)
	pulledFromTheRegistry(t, image, exporterImage, etcdImage)
	waitForEtcdMembers(t, 3*time.Minute)
	if now, newTerm := etcdLeader(t); newTerm <= term {
		t.Errorf("etcd's members, the leader %s's included, were replaced but the term stayed %d (now %s leads)", leader, term, now)
	} else {
		t.Logf("etcd: %s led in term %d before the upgrade, %s leads in term %d", leader, term, now, newTerm)
	}
	compareFields(t, "after the upgrade", before, specFields(t, "kept"))

	// The window ends: every replica runs this release.
	runHelm(append([]string{"upgrade", "nginx-operator"}, append(fromRegistry, "--reuse-values", "--set", "apiserver.emulatedVersion=")...)...)
	newFieldAcceptedAfterTheWindow(t, "kept")

	// Rollback to the previous release: it does not know the new field, so reads lack it
	// and the next write of the object removes it (docs/operations.md, "Rolling back");
	// every other field and every object stays.
	objectsBefore := get(t, "get", "ngx", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}")
	start := time.Now()
	runHelm("rollback", "nginx-operator", "1", "--namespace", systemNS, "--wait", "--timeout", "5m")
	onlyApiserverPods(t, "of "+previous, func(image, args string) bool { return image == previousImage })
	mustKubectl(t, "", "wait", "--for=condition=Available", "--timeout=3m", "apiservice", "-l", partOf)
	t.Logf("rolled back to %s in %s", previous, framework.Describe(time.Since(start)))
	for _, d := range []string{"nginx-operator-apiserver", "nginx-operator-controller"} {
		if got := get(t, "get", "deployment", "-n", systemNS, d, "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != previousImage {
			t.Errorf("after helm rollback %s runs %s, want %s", d, got, previousImage)
		}
	}
	mustKubectl(t, "", "patch", "ngx", "-n", "kept", "fields", "--type=merge", "-p", `{"spec": {"forceRedeploy": "2026-11-26"}}`)
	after := specFields(t, "kept")
	if _, ok := after["spec.contentUpdate"]; ok {
		t.Errorf("spec.contentUpdate is served by %s after the rollback", previous)
	}
	compareFields(t, "after the rollback", before, after)
	if got := get(t, "get", "ngx", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}"); got != objectsBefore {
		t.Errorf("NginxOperators after the rollback: %s, want %s", got, objectsBefore)
	}
	t.Logf("%d spec fields of %s kept through the upgrade and the rollback", len(before), previous)
}

// pulledFromTheRegistry checks that the apiserver, the controller (and the init container
// naming the exporter image) and etcd run the release's images, which the node's
// containerd pulled from the registry by digest, and that the controller gives the nginx
// pods of kept/fields (replicas 0) the exporter image its init container names.
func pulledFromTheRegistry(t *testing.T, image, exporterImage, etcdImage string) {
	t.Helper()
	for _, w := range []struct{ namespace, selector, status, want string }{
		{systemNS, "app.kubernetes.io/name=nginx-operator-apiserver", "containerStatuses[0]", image},
		{systemNS, "app.kubernetes.io/name=nginx-operator-controller", "containerStatuses[0]", image},
		{systemNS, "app.kubernetes.io/name=nginx-operator-controller", "initContainerStatuses[0]", exporterImage},
		{systemNS, "app.kubernetes.io/name=nginx-operator-etcd", "containerStatuses[0]", etcdImage},
	} {
		digest := w.want[strings.Index(w.want, "@"):]
		waitFor(t, 3*time.Minute, w.namespace+" "+w.selector+" pods' "+w.status+" to run "+w.want, func() bool {
			out := strings.Fields(get(t, "get", "pods", "-n", w.namespace, "-l", w.selector, "-o", `jsonpath={range .items[*]}{.status.`+w.status+`.imageID}{" "}{end}`))
			for _, id := range out {
				if !strings.HasSuffix(id, digest) {
					return false
				}
			}
			return len(out) > 0
		})
	}
	// The chart names it by tag@digest, exporterImage is repository@digest.
	repository, digest, _ := strings.Cut(exporterImage, "@")
	var given string
	waitFor(t, 3*time.Minute, "the nginx pods of kept/fields to be given "+exporterImage, func() bool {
		given = get(t, "get", "deployment", "-n", "kept", "fields", "-o", `jsonpath={.spec.template.spec.containers[?(@.name=="nginx-exporter")].image}`)
		return strings.HasPrefix(given, repository+":") && strings.HasSuffix(given, "@"+digest)
	})
	t.Logf("the apiserver, the controller (its init container naming the exporter) and etcd run %s, %s and %s, pulled from the registry; the nginx pods' sidecar is %s",
		image, exporterImage, etcdImage, given)
}

// onlyApiserverPods waits until every apiserver pod, terminating ones included, is one
// that ok accepts: helm's --wait returns once the new pods are ready, and the old ones
// serve until they are gone.
func onlyApiserverPods(t *testing.T, what string, ok func(image, args string) bool) {
	t.Helper()
	waitFor(t, 3*time.Minute, "only apiserver pods "+what, func() bool {
		out := strings.TrimSpace(get(t, "get", "pods", "-n", systemNS, "-l", "app.kubernetes.io/name=nginx-operator-apiserver",
			"-o", `jsonpath={range .items[*]}{.spec.containers[0].image}|{.spec.containers[0].args}{"\n"}{end}`))
		if out == "" {
			return false
		}
		for _, line := range strings.Split(out, "\n") {
			image, args, _ := strings.Cut(line, "|")
			if !ok(image, args) {
				return false
			}
		}
		return true
	})
}

// newFieldAcceptedAfterTheWindow checks, once the window has ended, that the new field
// is accepted on ns/fields and stays through the controller's status writes.
func newFieldAcceptedAfterTheWindow(t *testing.T, ns string) {
	t.Helper()
	if args := get(t, "get", "deployment", "-n", systemNS, "nginx-operator-apiserver", "-o", "jsonpath={.spec.template.spec.containers[0].args}"); strings.Contains(args, "--emulated-version") {
		t.Errorf("the apiserver still emulates after the window: %s", args)
	}
	// A replica that still emulates serves until its pod is gone (and would store nothing
	// of the new field, with a warning).
	onlyApiserverPods(t, "that do not emulate", func(image, args string) bool { return !strings.Contains(args, "--emulated-version") })
	mustKubectl(t, "", "patch", "ngx", "-n", ns, "fields", "--type=merge", "-p", `{"spec": {"contentUpdate": "Reload", "forceRedeploy": "after-the-window"}}`)
	generation := get(t, "get", "ngx", "-n", ns, "fields", "-o", "jsonpath={.metadata.generation}")
	waitFor(t, 2*time.Minute, "the controller to observe the new field", func() bool {
		return get(t, "get", "ngx", "-n", ns, "fields", "-o", "jsonpath={.status.observedGeneration}") == generation
	})
	if got := get(t, "get", "ngx", "-n", ns, "fields", "-o", "jsonpath={.spec.contentUpdate}"); got != "Reload" {
		t.Errorf("spec.contentUpdate = %q after the controller's status write, want Reload", got)
	}
}

// specFields is the spec of ns/fields flattened to path=value, one entry per field.
func specFields(t *testing.T, ns string) map[string]string {
	t.Helper()
	var o struct {
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal([]byte(get(t, "get", "ngx", "-n", ns, "fields", "-o", "json")), &o); err != nil {
		t.Fatal(err)
	}
	leaves, err := framework.JSONLeaves("spec", o.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return leaves
}

// compareFields reports every field of want that got lacks or changed.
func compareFields(t *testing.T, when string, want, got map[string]string) {
	t.Helper()
	for path, value := range want {
		if got[path] != value {
			t.Errorf("%s: %s = %s, want %s", when, path, got[path], value)
		}
	}
}

// newFieldWrites asks for spec.contentUpdate on ns/fields and writes its status, over
// and over, through whichever apiserver replica the aggregator picks.
type newFieldWrites struct {
	asked, acknowledged, warned, statuses atomic.Int64
}

// check reports what the writer saw: no write of the new field may have been
// acknowledged while replicas of the previous release served.
func (w *newFieldWrites) check(t *testing.T, previous string) {
	t.Helper()
	t.Logf("during the upgrade: %d writes of spec.contentUpdate (%d acknowledged, %d answered with the warning), %d status writes",
		w.asked.Load(), w.acknowledged.Load(), w.warned.Load(), w.statuses.Load())
	if w.acknowledged.Load() != 0 {
		t.Errorf("%d writes of spec.contentUpdate were acknowledged while replicas of %s served", w.acknowledged.Load(), previous)
	}
	if w.statuses.Load() == 0 {
		t.Errorf("the writer wrote no status: the window was not exercised")
	}
}

func (w *newFieldWrites) start(t *testing.T, ns string) (stop func()) {
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.WarningHandler = warningCounter{&w.warned}
	client := clientset.NewForConfigOrDie(cfg).OperatorV1alpha2().NginxOperators(ns)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	// Each request gets the load loop's budget of its own: sharing one among the three
	// failed CI once, on a machine loaded by the other lanes.
	request := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), clientRequestTimeout)
	}
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			ctx, cancel := request()
			o, err := client.Get(ctx, "fields", metav1.GetOptions{})
			cancel()
			if err != nil {
				continue
			}
			o.Spec.ContentUpdate = v1alpha2.ContentUpdateReload
			w.asked.Add(1)
			ctx, cancel = request()
			updated, err := client.Update(ctx, o, metav1.UpdateOptions{})
			cancel()
			if err == nil && updated.Spec.ContentUpdate != "" {
				w.acknowledged.Add(1)
			} else if err == nil {
				o = updated
			}
			o.Status.Conditions = []metav1.Condition{{Type: "Upgrading", Status: metav1.ConditionTrue, Reason: "StatusWrite", LastTransitionTime: metav1.Now()}}
			ctx, cancel = request()
			start := time.Now()
			_, err = client.UpdateStatus(ctx, o, metav1.UpdateOptions{})
			cancel()
			if err == nil {
				w.statuses.Add(1)
			} else if !apierrors.IsConflict(err) && !retryable(err) {
				t.Errorf("status write, after %s: %v", framework.Describe(time.Since(start)), err)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// warningCounter counts the warnings that spec.contentUpdate was not stored.
type warningCounter struct{ n *atomic.Int64 }

func (c warningCounter) HandleWarningHeader(code int, agent, text string) {
	if strings.Contains(text, "spec.contentUpdate was not stored") {
		c.n.Add(1)
	}
}

var _ rest.WarningHandler = warningCounter{}
