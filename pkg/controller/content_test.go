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

package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

func (h *harness) templateHash(name string) string {
	h.t.Helper()
	d := &appsv1.Deployment{}
	h.get(name, d)
	return d.Spec.Template.Annotations[builders.ContentHashAnnotation]
}

func (h *harness) update(obj client.Object) {
	h.t.Helper()
	if err := h.client.Update(context.Background(), obj); err != nil {
		h.t.Fatal(err)
	}
	h.writes.take() // the test's own write
}

func TestReconcileKeepsTheInlineConfigMap(t *testing.T) {
	no := sample("web")
	no.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\nhttp { server { listen 80; } }\n"}
	h := newHarness(t, no)
	if got := strings.Join(h.reconcile("web"), ","); got != "apply ConfigMap,apply Deployment,apply Service,update status" {
		t.Fatalf("first reconcile: %s", got)
	}
	cm := &corev1.ConfigMap{}
	h.get("web-nginx-conf", cm)
	if cm.Data["nginx.conf"] != no.Spec.Config.Inline {
		t.Errorf("ConfigMap data = %v", cm.Data)
	}
	first := h.templateHash("web")
	if first == "" {
		t.Fatal("no content hash on the pod template")
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("steady state wrote %v", got)
	}

	// A new configuration: the ConfigMap and the hash follow, so the pods roll.
	h.get("web", no)
	no.Spec.Config.Inline = "events {}\nhttp { server { listen 8080; } }\n"
	h.update(no)
	if got := strings.Join(h.reconcile("web"), ","); got != "apply ConfigMap,apply Deployment" {
		t.Errorf("after a config change: %s", got)
	}
	if second := h.templateHash("web"); second == first || second == "" {
		t.Errorf("content hash %q -> %q", first, second)
	}

	// Someone edits the ConfigMap: it is put back.
	h.get("web-nginx-conf", cm)
	cm.Data["nginx.conf"] = "tampered"
	h.update(cm)
	if got := strings.Join(h.reconcile("web"), ","); got != "apply ConfigMap" {
		t.Errorf("after tampering: %s", got)
	}

	// No inline configuration any more: the ConfigMap goes, and so does the hash.
	h.get("web", no)
	no.Spec.Config = nil
	h.update(no)
	if got := strings.Join(h.reconcile("web"), ","); got != "delete ConfigMap,apply Deployment" {
		t.Errorf("after dropping the config: %s", got)
	}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web-nginx-conf"}, cm); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap is still there: %v", err)
	}
	if got := h.templateHash("web"); got != "" {
		t.Errorf("hash %q left on a template that mounts nothing", got)
	}
}

func TestReconcileRollsWhenMountedContentChanges(t *testing.T) {
	no := sample("web")
	no.Spec.Config = &v1alpha2.ConfigSource{ConfigMapKeyRef: &v1alpha2.ConfigMapKeyReference{Name: "shared", Key: "nginx.conf"}}
	no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}}
	no.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "web-tls"}}
	shared := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "shop"}, Data: map[string]string{"nginx.conf": "a", "other": "x"}}
	site := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "shop"}, Data: map[string]string{"index.html": "hello"}}
	tls := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: "shop"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("cert-1"), "tls.key": []byte("key-1")}}
	h := newHarness(t, no, shared, site, tls)
	h.reconcile("web")
	hashes := []string{h.templateHash("web")}
	if cond := h.condition("web", v1alpha2.ConditionStalled); cond.Status != metav1.ConditionFalse {
		t.Errorf("Stalled with every reference present: %+v", cond)
	}

	// A ConfigMap's new data is also reported in status.configMapDigests, which the
	// apiserver records as a revision; a certificate's is not.
	digests := func() string {
		var got v1alpha2.NginxOperator
		h.get("web", &got)
		return fmt.Sprint(got.Status.ConfigMapDigests)
	}
	before := digests()
	if !strings.Contains(before, "shared nginx.conf") || !strings.Contains(before, "site  ") {
		t.Errorf("status.configMapDigests = %s, want shared's key and site", before)
	}
	change := func(what, writes string, mutate func()) {
		t.Helper()
		mutate()
		if got := strings.Join(h.reconcile("web"), ","); got != writes {
			t.Errorf("%s: writes %s, want %s", what, got, writes)
		}
		if now := digests(); (now != before) != strings.Contains(writes, "status") {
			t.Errorf("%s: status.configMapDigests %s, before %s", what, now, before)
		}
		before = digests()
		hash := h.templateHash("web")
		if slices.Contains(hashes, hash) {
			t.Errorf("%s: content hash %s seen before", what, hash)
		}
		hashes = append(hashes, hash)
	}
	change("the referenced key", "apply Deployment,update status", func() { shared.Data["nginx.conf"] = "b"; h.update(shared) })
	change("a file", "apply Deployment,update status", func() { site.Data["index.html"] = "hello again"; h.update(site) })
	change("a renewed certificate", "apply Deployment", func() { tls.Data["tls.crt"] = []byte("cert-2"); h.update(tls) })
	// Another key of the referenced ConfigMap is not mounted: nothing rolls.
	shared.Data["other"] = "y"
	h.update(shared)
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("an unmounted key changed; writes %v", got)
	}
}

func TestReconcileReadsMountedObjectsOnlyWhenTheyChange(t *testing.T) {
	no := sample("web")
	no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}}
	no.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "web-tls"}}
	site := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "shop"}, Data: map[string]string{"index.html": "hello"}}
	tls := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: "shop"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}}
	h := newHarness(t, no, site, tls)
	reads := &liveReads{Reader: h.r.APIReader}
	h.r.APIReader = reads
	h.reconcile("web")
	if got := strings.Join(reads.kinds, ","); !strings.Contains(got, "ConfigMap") || !strings.Contains(got, "Secret") {
		t.Fatalf("first reconcile read %q; want the ConfigMap and the Secret", got)
	}
	// Pods starting wake the NginxOperator again and again: nothing it mounts changed, so
	// nothing is read.
	for range 3 {
		reads.kinds = nil
		h.reconcile("web")
		if len(reads.kinds) != 0 {
			t.Fatalf("a reconcile with unchanged mounts read %q around the cache", reads.kinds)
		}
	}
	site.Data["index.html"] = "changed"
	h.update(site)
	reads.kinds = nil
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,update status" {
		t.Errorf("after the ConfigMap changed: writes %s, want the Deployment and status.configMapDigests", got)
	}
	if got := strings.Join(reads.kinds, ","); got != "ConfigMap" {
		t.Errorf("after the ConfigMap changed, read %q; want it alone", got)
	}
}

func TestReconcileReportsMissingReferences(t *testing.T) {
	no := sample("web")
	no.Spec.Config = &v1alpha2.ConfigSource{ConfigMapKeyRef: &v1alpha2.ConfigMapKeyReference{Name: "shared", Key: "nginx.conf"}}
	no.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "web-tls"}}
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: "shop"}, Type: corev1.SecretTypeOpaque}
	h := newHarness(t, no, opaque)
	// A Secret that is not a TLS Secret is never mounted: no Deployment is applied with it,
	// and status says why.
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Service,update status" {
		t.Errorf("writes with an Opaque Secret in spec.tls: %s", got)
	}
	// The same words, missing or Opaque: status does not tell readers who may not read
	// Secrets whether one exists.
	const unmountable = "spec.tls[0]: Secret web-tls is missing or not of type kubernetes.io/tls; only kubernetes.io/tls Secrets are mounted"
	var opaqueConditions []metav1.Condition
	for _, typ := range []string{v1alpha2.ConditionStalled, v1alpha2.ConditionOperatorDegraded} {
		c := h.condition("web", typ)
		if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, unmountable) || strings.Contains(c.Message, "Opaque") {
			t.Errorf("%s = %+v", typ, c)
		}
		opaqueConditions = append(opaqueConditions, *c)
	}
	if err := h.client.Delete(context.Background(), opaque); err != nil {
		t.Fatal(err)
	}
	drain(h)
	h.writes.take()

	// A missing Secret is refused alike, and status says the same.
	if got := strings.Join(h.reconcile("web"), ","); got != "" {
		t.Errorf("writes with a missing Secret in spec.tls: %s", got)
	}
	for i, typ := range []string{v1alpha2.ConditionStalled, v1alpha2.ConditionOperatorDegraded} {
		if c := h.condition("web", typ); c.Reason != opaqueConditions[i].Reason || c.Message != opaqueConditions[i].Message {
			t.Errorf("%s with the Secret missing = %+v; with it Opaque: %+v", typ, c, opaqueConditions[i])
		}
	}

	// A missing ConfigMap is waited for: the Deployment is applied all the same.
	if err := h.client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: "shop"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}}); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,update status" {
		t.Errorf("writes %s", got)
	}
	for _, typ := range []string{v1alpha2.ConditionReady, v1alpha2.ConditionStalled, v1alpha2.ConditionOperatorDegraded} {
		c := h.condition("web", typ)
		if c.Reason != v1alpha2.ReasonReferenceNotFound || !strings.Contains(c.Message, "ConfigMap shared not found") {
			t.Errorf("%s = %+v", typ, c)
		}
	}
	if c := h.condition("web", v1alpha2.ConditionStalled); c.Status != metav1.ConditionTrue {
		t.Errorf("Stalled = %+v", c)
	}
	if ev := drain(h); !strings.Contains(ev, "Warning ReferenceNotFound") {
		t.Errorf("events %q lack the Warning", ev)
	}

	// Once the ConfigMap exists, the Deployment gets the content.
	if err := h.client.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "shop"}, Data: map[string]string{"nginx.conf": "x"}}); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,update status" {
		t.Errorf("after the references appeared: %s", got)
	}
	if c := h.condition("web", v1alpha2.ConditionStalled); c.Status != metav1.ConditionFalse {
		t.Errorf("Stalled after the fix = %+v", c)
	}
}

func TestReconcileKeepsThePodDisruptionBudget(t *testing.T) {
	no := sample("web")
	no.Spec.PodDisruptionBudget = &v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))}
	h := newHarness(t, no)
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,apply Service,apply PodDisruptionBudget,update status" {
		t.Fatalf("first reconcile: %s", got)
	}
	pdb := &policyv1.PodDisruptionBudget{}
	h.get("web", pdb)
	if pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget = %+v", pdb.Spec)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("steady state wrote %v", got)
	}
	h.get("web", no)
	no.Spec.PodDisruptionBudget = nil
	h.update(no)
	if got := strings.Join(h.reconcile("web"), ","); got != "delete PodDisruptionBudget" {
		t.Errorf("after dropping it: %s", got)
	}
	// A PodDisruptionBudget of the same name that is not ours stays.
	stranger := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}
	if err := h.client.Create(context.Background(), stranger); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("a stranger's PodDisruptionBudget: writes %v", got)
	}
}

func TestReconcileExplainsPodsThatCannotRun(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.reconcile("web")
	pod := waitingPod("web-abc", "ImagePullBackOff", `Back-off pulling image "nginx:none"`)
	pod.Namespace, pod.Labels = "shop", objectLabels(sample("web"))
	if err := h.client.Create(context.Background(), &pod); err != nil {
		t.Fatal(err)
	}
	// A pod of someone else with the same selector labels but no managed-by label is
	// not in the cache and does not count.
	foreign := pendingPod("web-foreign", "no nodes")
	foreign.Namespace, foreign.Labels = "shop", builders.SelectorLabels(sample("web"))
	if err := h.client.Create(context.Background(), &foreign); err != nil {
		t.Fatal(err)
	}
	drain(h)
	h.reconcile("web")
	ready, stalled := h.condition("web", v1alpha2.ConditionReady), h.condition("web", v1alpha2.ConditionStalled)
	if ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha2.ReasonImagePullFailed || !strings.Contains(ready.Message, "1 of 1 pods cannot pull the image") ||
		stalled.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v, Stalled = %+v", ready, stalled)
	}
	if ev := drain(h); !strings.Contains(ev, "Warning ImagePullFailed") {
		t.Errorf("events %q lack the Warning", ev)
	}
	// The same failure again: no second event.
	h.reconcile("web")
	if ev := drain(h); ev != "" {
		t.Errorf("a repeated failure emitted %q", ev)
	}

	// Fixed: the pod runs, the rollout completes, Ready turns True.
	if err := h.client.Delete(context.Background(), &pod); err != nil {
		t.Fatal(err)
	}
	h.deploymentAvailable("web", 2)
	h.reconcile("web")
	if ready := h.condition("web", v1alpha2.ConditionReady); ready.Status != metav1.ConditionTrue || ready.Reason != v1alpha2.ReasonOperatorSucceeded {
		t.Errorf("Ready after the fix = %+v", ready)
	}
	if c := h.condition("web", v1alpha2.ConditionReconciling); c.Status != metav1.ConditionFalse {
		t.Errorf("Reconciling after the fix = %+v", c)
	}
}

// drain returns the recorded events, one per line.
func drain(h *harness) string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

// TestSecretsAndConfigMapsReadAsMetadataOrByName: the cached client (which in the manager
// caches every ConfigMap and Secret of the watched namespaces) is asked for their metadata
// only, never for a full object or list, so no informer of their content can start; the
// content is read around the cache, one named object at a time, and only for what the
// spec mounts (the certificate to hash, the files) or what the controller owns (the inline
// configuration's ConfigMap, compared before an apply).
func TestSecretsAndConfigMapsReadAsMetadataOrByName(t *testing.T) {
	no := sample("web")
	no.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\nhttp { server { listen 80; } }\n"}
	no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}}
	no.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "web-tls"}}
	site := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "shop"}, Data: map[string]string{"index.html": "hello"}}
	tls := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: "shop"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password", Namespace: "shop"}, Data: map[string][]byte{"password": []byte("p")}}
	h := newHarness(t, no, site, tls, other)
	cached := h.r.Client
	h.r.Client = interceptor.NewClient(cached.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			switch obj.(type) {
			case *corev1.Secret, *corev1.ConfigMap:
				t.Errorf("the cached client was asked for the full %T %s", obj, key)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			switch list.(type) {
			case *corev1.SecretList, *corev1.ConfigMapList:
				t.Errorf("the cached client was asked for a %T", list)
			}
			return c.List(ctx, list, opts...)
		},
	})
	var live []string
	reads := &namedReads{Reader: h.r.APIReader, names: &live}
	h.r.APIReader = reads
	h.reconcile("web")
	slices.Sort(live)
	if got := strings.Join(live, ","); got != "ConfigMap shop/site,ConfigMap shop/web-nginx-conf,Secret shop/web-tls" {
		t.Errorf("read around the cache: %s; want the mounted ConfigMap and Secret and the inline configuration's ConfigMap", got)
	}
}

// namedReads records the kind and key of each read of a Secret or ConfigMap around the
// cache.
type namedReads struct {
	client.Reader
	names *[]string
}

func (n *namedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if kind := kindOf(obj); kind == "Secret" || kind == "ConfigMap" {
		*n.names = append(*n.names, kind+" "+key.String())
	}
	return n.Reader.Get(ctx, key, obj, opts...)
}
