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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// writeLog records every write the reconciler sends to the API.
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, s)
}

func (w *writeLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = nil
	return out
}

type harness struct {
	t *testing.T
	// client is the API server's view; the reconciler's Client sees it through a
	// cache that holds only labelled Deployments and Services, as in NewManager.
	client   client.Client
	writes   *writeLog
	recorder *events.FakeRecorder
	r        *Reconciler

	mu          sync.Mutex
	refuseApply map[string]error // by kind
}

// refuse makes every apply of kind fail with err, as the API server would; nil lifts it.
func (h *harness) refuse(kind string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refuseApply[kind] = err
}

func (h *harness) applyOutcome(kind string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refuseApply[kind]
}

func newHarness(t *testing.T, objs ...client.Object) *harness {
	log := &writeLog{}
	h := &harness{t: t, writes: log, refuseApply: map[string]error{}}
	c := fake.NewClientBuilder().
		WithScheme(NewScheme()).
		WithStatusSubresource(&v1alpha2.NginxOperator{}).
		WithReturnManagedFields().
		WithObjects(objs...).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				log.add("create " + kindOf(obj))
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				log.add("update " + kindOf(obj))
				return c.Update(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				log.add("patch " + kindOf(obj))
				return c.Patch(ctx, obj, patch, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				log.add("delete " + kindOf(obj))
				return c.Delete(ctx, obj, opts...)
			},
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				kind := "?"
				if k, ok := obj.(interface{ GetKind() *string }); ok && k.GetKind() != nil {
					kind = *k.GetKind()
				}
				log.add("apply " + kind)
				if err := h.applyOutcome(kind); err != nil {
					return err
				}
				return c.Apply(ctx, obj, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				log.add("update " + sub)
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				log.add("patch " + sub)
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).
		Build()
	cached := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			switch obj.(type) {
			case *appsv1.Deployment, *corev1.Service, *policyv1.PodDisruptionBudget, *corev1.Pod:
				if obj.GetLabels()[builders.ManagedByLabel] != builders.FieldManager {
					return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
				}
			}
			return nil
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if pods, ok := list.(*corev1.PodList); ok {
				pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.Labels[builders.ManagedByLabel] != builders.FieldManager })
			}
			return nil
		},
	})
	h.client = c
	h.recorder = events.NewFakeRecorder(100)
	h.r = &Reconciler{Client: cached, APIReader: c, Recorder: h.recorder, Clock: clocktesting.NewFakePassiveClock(time.Unix(1_800_000_000, 0))}
	return h
}

func (h *harness) reconcile(name string) []string {
	h.t.Helper()
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: name}}); err != nil {
		h.t.Fatalf("reconcile: %v", err)
	}
	return h.writes.take()
}

// reconcileFailing expects the reconcile to fail and returns the writes it made and its
// error.
func (h *harness) reconcileFailing(name string) ([]string, error) {
	h.t.Helper()
	result, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: name}})
	if err == nil {
		h.t.Fatalf("reconcile succeeded (result %+v); want the refusal returned so the workqueue backs off", result)
	}
	if result != (ctrl.Result{}) {
		h.t.Errorf("result = %+v; with an error only the rate limiter may schedule the retry", result)
	}
	return h.writes.take(), err
}

// deploymentAvailable plays the Deployment controller: the rollout of the named
// Deployment is complete with the given number of available pods.
func (h *harness) deploymentAvailable(name string, replicas int32) {
	h.t.Helper()
	d := &appsv1.Deployment{}
	h.get(name, d)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
	if err := h.client.Status().Update(context.Background(), d); err != nil {
		h.t.Fatal(err)
	}
}

// changeSpec edits an NginxOperator's spec as a user would, with the generation the
// apiserver would give it.
func (h *harness) changeSpec(name string, change func(*v1alpha2.NginxOperatorSpec)) {
	h.t.Helper()
	no := &v1alpha2.NginxOperator{}
	h.get(name, no)
	change(&no.Spec)
	no.Generation++
	h.update(no)
}

func (h *harness) get(name string, obj client.Object) {
	h.t.Helper()
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: name}, obj); err != nil {
		h.t.Fatal(err)
	}
}

func TestReconcileWritesOnlyWhatChanged(t *testing.T) {
	h := newHarness(t, sample("web"))

	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,apply Service,update status" {
		t.Fatalf("first reconcile wrote %q", got)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Fatalf("second reconcile of an unchanged object wrote %q", got)
	}

	// The Deployment controller reports progress: only status changes.
	h.deploymentAvailable("web", 2)
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "update status" {
		t.Fatalf("after the Deployment became available: %q", got)
	}
	no := &v1alpha2.NginxOperator{}
	h.get("web", no)
	if c := apimeta.FindStatusCondition(no.Status.Conditions, v1alpha2.ConditionAvailable); c == nil || c.Status != metav1.ConditionTrue || no.Status.ReadyReplicas != 2 {
		t.Fatalf("status = %+v", no.Status)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Fatalf("steady state wrote %q", got)
	}

	// A spec change reaches the Deployment, not the Service.
	no.Spec.Replicas = ptr.To[int32](5)
	no.Generation = 2
	if err := h.client.Update(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,update status" {
		t.Fatalf("after scaling: %q", got)
	}
	d := &appsv1.Deployment{}
	h.get("web", d)
	if *d.Spec.Replicas != 5 {
		t.Errorf("deployment replicas = %d", *d.Spec.Replicas)
	}
}

// liveReads counts the reads that go around the cache.
type liveReads struct {
	client.Reader
	mu    sync.Mutex
	kinds []string
}

func (l *liveReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	l.mu.Lock()
	l.kinds = append(l.kinds, kindOf(obj))
	l.mu.Unlock()
	return l.Reader.Get(ctx, key, obj, opts...)
}

func TestReconcileTakesTheAppliedDeploymentFromTheApplyResponse(t *testing.T) {
	h := newHarness(t, sample("web"))
	reads := &liveReads{Reader: h.r.APIReader}
	h.r.APIReader = reads

	// A new NginxOperator: only the look for same-named strangers reads around the cache.
	h.reconcile("web")
	if got := strings.Join(reads.kinds, ","); got != "Deployment,Service" {
		t.Errorf("first reconcile read %q around the cache, want the stranger checks only", got)
	}

	// A spec change while the Deployment is available: status comes from the apply's
	// response, which carries the Deployment controller's status, without another read.
	h.deploymentAvailable("web", 2)
	h.reconcile("web")
	no := &v1alpha2.NginxOperator{}
	h.get("web", no)
	no.Spec.Replicas = ptr.To[int32](5)
	no.Generation = 2
	if err := h.client.Update(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	reads.kinds = nil
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,update status" {
		t.Fatalf("after scaling: %q", got)
	}
	if len(reads.kinds) != 0 {
		t.Errorf("reconcile of a scaled NginxOperator read %q around the cache", reads.kinds)
	}
	h.get("web", no)
	if no.Status.ReadyReplicas != 2 || !apimeta.IsStatusConditionTrue(no.Status.Conditions, v1alpha2.ConditionProgressing) {
		t.Errorf("status after scaling does not show the applied Deployment rolling out from 2 ready pods: %+v", no.Status)
	}
}

func TestReconcileRevertsDriftAndKeepsForeignFields(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.reconcile("web")
	h.reconcile("web")

	// Someone edits a managed field and adds an annotation of their own.
	d := &appsv1.Deployment{}
	h.get("web", d)
	d.Spec.Replicas = ptr.To[int32](9)
	d.Annotations = map[string]string{"team": "edge"}
	if err := h.client.Update(context.Background(), d, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment" {
		t.Fatalf("drift correction wrote %q", got)
	}
	h.get("web", d)
	if *d.Spec.Replicas != 2 || d.Annotations["team"] != "edge" {
		t.Errorf("after drift correction replicas=%d annotations=%v", *d.Spec.Replicas, d.Annotations)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("after drift correction, steady state wrote %q", got)
	}
}

func TestReconcileNeverTakesOverForeignObjects(t *testing.T) {
	foreign := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1234}}},
	}
	h := newHarness(t, sample("web"), foreign)
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,update status" {
		t.Fatalf("with a foreign Service, reconcile wrote %q", got)
	}
	svc := &corev1.Service{}
	h.get("web", svc)
	if svc.Spec.Ports[0].Port != 1234 || len(svc.OwnerReferences) != 0 {
		t.Errorf("the foreign Service was changed: %+v", svc.Spec.Ports)
	}
	no := &v1alpha2.NginxOperator{}
	h.get("web", no)
	c := apimeta.FindStatusCondition(no.Status.Conditions, v1alpha2.ConditionOperatorDegraded)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha2.ReasonOperatorResourceNotAvailable || !strings.Contains(c.Message, "Service shop/web") {
		t.Errorf("OperatorDegraded = %+v", c)
	}
	result, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: "web"}})
	if err != nil || result.RequeueAfter != BlockedRecheckInterval {
		t.Errorf("blocked reconcile = %+v, %v; want a recheck after %s, since the stranger is not watched", result, err, BlockedRecheckInterval)
	}
	if got := h.writes.take(); len(got) != 0 {
		t.Errorf("a blocked steady state wrote %q", got)
	}
	var warnings []string
	for len(h.recorder.Events) > 0 {
		if e := <-h.recorder.Events; strings.HasPrefix(e, "Warning OwnershipConflict") {
			warnings = append(warnings, e)
		}
	}
	if len(warnings) == 0 {
		t.Error("no Warning OwnershipConflict event")
	}
}

// The ConfigMap of an inline configuration that someone else controls is never mounted:
// its writer would choose what nginx runs. The Deployment is neither created nor changed.
func TestReconcileMountsNoForeignConfigMap(t *testing.T) {
	stranger := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-nginx-conf", Namespace: "shop"},
		Data: map[string]string{"nginx.conf": "http { server { location / { alias /etc/nginx/tls/; } } }"}}
	inline := sample("web")
	inline.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\nhttp {}\n"}
	blocked := func(h *harness) {
		t.Helper()
		for _, typ := range []string{v1alpha2.ConditionOperatorDegraded, v1alpha2.ConditionStalled} {
			c := h.condition("web", typ)
			if c.Status != metav1.ConditionTrue || c.Reason != v1alpha2.ReasonOperatorResourceNotAvailable ||
				!strings.Contains(c.Message, "ConfigMap shop/web-nginx-conf exists and is not controlled by this NginxOperator") ||
				!strings.Contains(c.Message, "the Deployment is not updated") {
				t.Errorf("%s = %+v", typ, c)
			}
		}
	}

	// A new NginxOperator: no Deployment at all.
	h := newHarness(t, inline.DeepCopy(), stranger.DeepCopy())
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Service,update status" {
		t.Errorf("with a foreign ConfigMap, a new NginxOperator wrote %q", got)
	}
	if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment exists: %v", err)
	}
	blocked(h)

	// A running NginxOperator that turns to an inline configuration: its pods stay as they are.
	h = newHarness(t, sample("web"), stranger.DeepCopy())
	h.reconcile("web")
	h.deploymentAvailable("web", 2)
	before := &appsv1.Deployment{}
	h.get("web", before)
	h.changeSpec("web", func(spec *v1alpha2.NginxOperatorSpec) { spec.Config = inline.Spec.Config })
	if got := strings.Join(h.reconcile("web"), ","); got != "update status" {
		t.Errorf("with a foreign ConfigMap, a changed NginxOperator wrote %q", got)
	}
	after := &appsv1.Deployment{}
	h.get("web", after)
	if after.ResourceVersion != before.ResourceVersion || len(after.Spec.Template.Spec.Volumes) != 0 {
		t.Errorf("the Deployment changed: volumes %+v", after.Spec.Template.Spec.Volumes)
	}
	blocked(h)
	no := &v1alpha2.NginxOperator{}
	h.get("web", no)
	if no.Status.AvailableReplicas != 2 {
		t.Errorf("status no longer shows the Deployment that serves: %+v", no.Status)
	}

	// Once it is gone, the controller's own ConfigMap is made and mounted.
	if err := h.client.Delete(context.Background(), stranger.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "apply ConfigMap,apply Deployment,update status" {
		t.Errorf("after the foreign ConfigMap went: %q", got)
	}
}

func TestReconcileQPSModeAndDeletedObjects(t *testing.T) {
	no := sample("api")
	no.Spec.Replicas = nil
	no.Spec.QPS = &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}
	h := newHarness(t, no)
	h.reconcile("api")
	d := &appsv1.Deployment{}
	h.get("api", d)
	if *d.Spec.Replicas != 3 {
		t.Errorf("QPS-mode replicas = %d, want 3", *d.Spec.Replicas)
	}
	if got := h.reconcile("gone"); len(got) != 0 {
		t.Errorf("reconciling a deleted NginxOperator wrote %q", got)
	}
}

func TestReconcileReplacesAnEditedServicePort(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.reconcile("web")
	svc := &corev1.Service{}
	h.get("web", svc)
	svc.Spec.Ports[0].Port = 81
	if err := h.client.Update(context.Background(), svc, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "update Service,apply Service" {
		t.Fatalf("reverting an edited port wrote %q", got)
	}
	h.get("web", svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("service ports = %+v", svc.Spec.Ports)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("steady state wrote %q", got)
	}
}

// A port the spec moves is replaced by the apply alone: an Update that dropped the old
// port first would give the Deployment a template without ports, rolled out on its own
// before the one with the new port.
func TestReconcileMovesPortsInOneApply(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.reconcile("web")
	h.changeSpec("web", func(spec *v1alpha2.NginxOperatorSpec) {
		spec.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
		spec.Service.Ports = []v1alpha2.ServicePort{{Name: "http", Port: 8081}}
	})
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,apply Service,update status" {
		t.Fatalf("moving the ports wrote %q", got)
	}
	d := &appsv1.Deployment{}
	h.get("web", d)
	if ports := d.Spec.Template.Spec.Containers[0].Ports; len(ports) != 1 || ports[0].ContainerPort != 8080 {
		t.Errorf("container ports = %+v", ports)
	}
	svc := &corev1.Service{}
	h.get("web", svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8081 {
		t.Errorf("service ports = %+v", svc.Spec.Ports)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("steady state wrote %q", got)
	}
}

// A Service port another manager also applied stays when this controller's apply lets
// go of it; moving it therefore still needs the Update, or the new port would sit beside
// it under the same name.
func TestReconcileMovesAPortAnotherManagerAlsoApplied(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.reconcile("web")
	other := corev1ac.Service("web", "shop").WithSpec(corev1ac.ServiceSpec().
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80).WithProtocol(corev1.ProtocolTCP).WithTargetPort(intstr.FromString("http"))))
	if err := h.client.Apply(context.Background(), other, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	h.changeSpec("web", func(spec *v1alpha2.NginxOperatorSpec) {
		spec.Service.Ports = []v1alpha2.ServicePort{{Name: "http", Port: 8081}}
	})
	if got := strings.Join(h.reconcile("web"), ","); got != "update Service,apply Service,update status" {
		t.Fatalf("moving a co-owned port wrote %q", got)
	}
	svc := &corev1.Service{}
	h.get("web", svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8081 {
		t.Errorf("service ports = %+v", svc.Spec.Ports)
	}
}

func TestReconcileReplacesAnEditedContainerPort(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.reconcile("web")
	d := &appsv1.Deployment{}
	h.get("web", d)
	d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 81
	if err := h.client.Update(context.Background(), d, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	if got := strings.Join(h.reconcile("web"), ","); got != "update Deployment,apply Deployment" {
		t.Fatalf("reverting an edited container port wrote %q", got)
	}
	h.get("web", d)
	if ports := d.Spec.Template.Spec.Containers[0].Ports; len(ports) != 1 || ports[0].ContainerPort != 80 {
		t.Errorf("container ports = %+v", ports)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Errorf("steady state wrote %q", got)
	}
}
