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

package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	applyv1alpha2 "github.com/example/nginx-operator/pkg/generated/applyconfiguration/operator/v1alpha2"
	v1alpha1client "github.com/example/nginx-operator/pkg/generated/clientset/versioned/typed/operator/v1alpha1"
	v1alpha2client "github.com/example/nginx-operator/pkg/generated/clientset/versioned/typed/operator/v1alpha2"
)

const ns = "default"

func richObject(name string) *v1alpha2.NginxOperator {
	return &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "edge"}},
		Spec: v1alpha2.NginxOperatorSpec{
			Image:    "nginx:1.25",
			Replicas: ptr.To[int32](2),
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: 8080},
				{Name: "https", ContainerPort: 8443},
			},
			Env:     []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Service: &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeNodePort, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80, NodePort: ptr.To[int32](30080)}}},
		},
	}
}

func newAPI(t *testing.T) (s *server, ns string, ctx context.Context, v2 v1alpha2client.NginxOperatorInterface, v1 v1alpha1client.NginxOperatorInterface) {
	t.Helper()
	s, ns = sharedServer(t), namespaceFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return s, ns, ctx, s.Client.OperatorV1alpha2().NginxOperators(ns), s.Client.OperatorV1alpha1().NginxOperators(ns)
}

func mustCreate(ctx context.Context, t *testing.T, client v1alpha2client.NginxOperatorInterface, obj *v1alpha2.NginxOperator) *v1alpha2.NginxOperator {
	t.Helper()
	created, err := client.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

func TestCreateV1alpha2AppliesDefaultsAndReadsBackInBothVersions(t *testing.T) {
	_, _, ctx, v2, v1 := newAPI(t)
	created := mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "plain"}})
	// No image: the unprivileged nginx on 8080 behind a Service on 80, restricted.
	if created.Spec.Image != v1alpha2.DefaultImage || *created.Spec.Replicas != 1 || created.Spec.Ports[0].ContainerPort != 8080 ||
		created.Spec.Service.Type != v1alpha2.ServiceTypeClusterIP || created.Spec.Service.Ports[0].Port != 80 || created.Generation != 1 ||
		created.Spec.Pod == nil || created.Spec.Pod.SecurityContext == nil || !*created.Spec.Pod.SecurityContext.RunAsNonRoot ||
		created.Spec.SecurityContext == nil || *created.Spec.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("defaults not applied: %+v", created.Spec)
	}
	old, err := v1.Get(ctx, "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A v1alpha1 object is exactly this: its port is the Service's, and nothing needs the annotation.
	if *old.Spec.Port != 80 || *old.Spec.Replicas != 1 || len(old.Annotations) != 0 {
		t.Errorf("v1alpha1 view = %+v annotations=%v", old.Spec, old.Annotations)
	}

	// A named image gets port 80 and no security context; v1alpha1 cannot say the image
	// (nor that it runs as root): it travels in the annotation.
	stock := mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "stock"}, Spec: v1alpha2.NginxOperatorSpec{Image: "nginx:1.27.4"}})
	if stock.Spec.Ports[0].ContainerPort != 80 || stock.Spec.SecurityContext != nil || stock.Spec.Pod != nil {
		t.Errorf("defaults of a named image: %+v", stock.Spec)
	}
	old, err = v1.Get(ctx, "stock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *old.Spec.Port != 80 || *old.Spec.Replicas != 1 || !strings.Contains(old.Annotations[operator.PreservedFieldsAnnotation], `"image":"nginx:1.27.4"`) {
		t.Errorf("v1alpha1 view of a stock nginx = %+v annotations=%v", old.Spec, old.Annotations)
	}
	// A v1alpha1 edit of port moves the Service; the image and its port 80 stay.
	old.Spec.Port = ptr.To[int32](8000)
	if _, err := v1.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := v2.Get(ctx, "stock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Image != "nginx:1.27.4" || got.Spec.Ports[0].ContainerPort != 80 || got.Spec.Service.Ports[0].Port != 8000 || got.Spec.SecurityContext != nil || got.Spec.Pod != nil {
		t.Errorf("stock nginx after a v1alpha1 port edit: %+v", got.Spec)
	}
}

func TestCreateV1alpha1AndReadAsV1alpha2(t *testing.T) {
	_, _, ctx, v2, v1 := newAPI(t)
	_, err := v1.Create(ctx, &v1alpha1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy"},
		Spec:       v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](9090), Replicas: ptr.To[int32](3), ForceRedploy: "x"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v2.Get(ctx, "legacy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The default unprivileged image, restricted, on 8080; v1alpha1's port is the Service's.
	if got.Spec.Image != v1alpha2.DefaultImage || len(got.Spec.Ports) != 1 || got.Spec.Ports[0].ContainerPort != 8080 || got.Spec.Ports[0].Name != "http" ||
		len(got.Spec.Service.Ports) != 1 || got.Spec.Service.Ports[0].Port != 9090 || got.Spec.Service.Ports[0].Name != "http" ||
		got.Spec.SecurityContext == nil || *got.Spec.SecurityContext.AllowPrivilegeEscalation ||
		got.Spec.Pod == nil || got.Spec.Pod.SecurityContext == nil || !*got.Spec.Pod.SecurityContext.RunAsNonRoot ||
		*got.Spec.Replicas != 3 || got.Spec.ForceRedeploy != "x" {
		t.Errorf("v1alpha2 view = %+v", got.Spec)
	}
}

func TestUpdateThroughV1alpha1KeepsV1alpha2OnlyFields(t *testing.T) {
	_, _, ctx, v2, v1 := newAPI(t)
	mustCreate(ctx, t, v2, richObject("rich"))
	old, err := v1.Get(ctx, "rich", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Spec.Replicas = ptr.To[int32](4)
	old.Spec.ForceRedploy = "now"
	if _, err := v1.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := v2.Get(ctx, "rich", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 4 || got.Spec.ForceRedeploy != "now" || got.Spec.Image != "nginx:1.25" || len(got.Spec.Ports) != 2 ||
		len(got.Spec.Env) != 1 || got.Spec.Service.Type != v1alpha2.ServiceTypeNodePort || *got.Spec.Service.Ports[0].NodePort != 30080 {
		t.Errorf("v1alpha2-only fields lost: %+v", got.Spec)
	}
	if _, found := got.Annotations[operator.PreservedFieldsAnnotation]; found {
		t.Errorf("preserved-fields annotation leaked into storage")
	}
	if got.Generation != 2 {
		t.Errorf("generation = %d, want 2", got.Generation)
	}
}

func TestV1alpha1RequestsCarryADeprecationWarning(t *testing.T) {
	s, ns, _, _, _ := newAPI(t)
	const want = `299 - "operator.example.com/v1alpha1 NginxOperator is deprecated in nginx-operator v0.1+, unavailable in v0.4+; use operator.example.com/v1alpha2 NginxOperator"`
	for _, version := range []string{"v1alpha1", "v1alpha2"} {
		path := "/apis/operator.example.com/" + version + "/namespaces/" + ns + "/nginxoperators"
		warnings := get(t, s.httpClient(false), s.URL(path), "application/json").Header.Values("Warning")
		if version == "v1alpha1" && (len(warnings) != 1 || warnings[0] != want) {
			t.Errorf("%s: Warning = %q, want [%s]", path, warnings, want)
		}
		if version == "v1alpha2" && len(warnings) != 0 {
			t.Errorf("%s: unexpected Warning %q", path, warnings)
		}
	}
}

// TestVersionReportsTheNginxOperatorRelease runs the binary: the release it reports is
// the one the linker stamped into it.
func TestVersionReportsTheNginxOperatorRelease(t *testing.T) {
	s := startBinaryServer(t, t.TempDir())
	var info version.Info
	decode(t, get(t, s.httpClient(false), s.URL("/version"), "application/json"), &info)
	if info.GitVersion != builtVersion || info.Major != "0" || info.Minor != "2" || info.EmulationMajor != "0" || info.EmulationMinor != "2" {
		t.Errorf("/version = %+v, want %s (0.2), emulating 0.2", info, builtVersion)
	}
}

func TestInvalidObjectsGet422WithFieldPaths(t *testing.T) {
	_, _, ctx, v2, _ := newAPI(t)
	bad := richObject("Bad.Name")
	bad.Spec.Replicas = ptr.To[int32](-1)
	bad.Spec.Ports[1].ContainerPort = 70000
	bad.Spec.Service.Ports[0].NodePort = ptr.To[int32](80)
	_, err := v2.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want 422 Invalid", err)
	}
	want := map[string]bool{"metadata.name": false, "spec.replicas": false, "spec.ports[1].containerPort": false, "spec.service.ports[0].nodePort": false}
	for _, cause := range err.(apierrors.APIStatus).Status().Details.Causes {
		want[cause.Field] = true
	}
	for f, seen := range want {
		if !seen {
			t.Errorf("no cause for %s in %v", f, err)
		}
	}
	qps := richObject("qps-and-replicas")
	qps.Spec.QPS = &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}
	if _, err := v2.Create(ctx, qps, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("replicas with qps: err = %v", err)
	}
}

func TestStaleResourceVersionConflicts(t *testing.T) {
	_, _, ctx, v2, _ := newAPI(t)
	obj := mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "plain"}})
	stale := obj.DeepCopy()
	obj.Spec.Replicas = ptr.To[int32](2)
	if _, err := v2.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Spec.Replicas = ptr.To[int32](3)
	if _, err := v2.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("err = %v, want 409 Conflict", err)
	}
}

// writeStatus writes the status a controller would for an object running replicas pods.
func writeStatus(ctx context.Context, t *testing.T, v2 v1alpha2client.NginxOperatorInterface, obj *v1alpha2.NginxOperator, replicas int32) *v1alpha2.NginxOperator {
	t.Helper()
	obj.Status = v1alpha2.NginxOperatorStatus{ObservedGeneration: obj.Generation, Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: 1, Selector: "app=" + obj.Name,
		Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: "OperatorSucceeded", LastTransitionTime: metav1.Now()}}}
	updated, err := v2.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return updated
}

func TestStatusSubresourceAndMainResourceStayApart(t *testing.T) {
	_, _, ctx, v2, _ := newAPI(t)
	obj := mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr.To[int32](2)}})
	generation := obj.Generation
	obj.Spec.Replicas = ptr.To[int32](9)
	updated := writeStatus(ctx, t, v2, obj, 2)
	if *updated.Spec.Replicas == 9 || updated.Status.ReadyReplicas != 2 || updated.Generation != generation {
		t.Errorf("status update: spec.replicas=%d status=%+v generation=%d", *updated.Spec.Replicas, updated.Status, updated.Generation)
	}
	updated.Status.ReadyReplicas = 0
	updated.Labels = map[string]string{"touched": "yes"}
	again, err := v2.Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Status.ReadyReplicas != 2 || again.Generation != generation {
		t.Errorf("main update changed status or generation: %+v gen=%d", again.Status, again.Generation)
	}
	invalid := again.DeepCopy()
	invalid.Status.Conditions[0].Status = "Perhaps"
	if _, err := v2.UpdateStatus(ctx, invalid, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.conditions[0].status") {
		t.Errorf("invalid condition: err = %v", err)
	}
}

func TestScaleHasItsSelectorBeforeAnyStatusInBothVersions(t *testing.T) {
	s, ns, ctx, v2, _ := newAPI(t)
	// No controller runs here: status stays empty, as in the moment after a create.
	mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}})
	for _, version := range []string{"v1alpha1", "v1alpha2"} {
		scale := &autoscalingv1.Scale{}
		err := s.Client.OperatorV1alpha2().RESTClient().Get().
			AbsPath("/apis/operator.example.com", version, "namespaces", ns, "nginxoperators", "fresh", "scale").Do(ctx).Into(scale)
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		if want := "app.kubernetes.io/instance=fresh,app.kubernetes.io/name=nginx"; scale.Status.Selector != want || scale.Spec.Replicas != 1 {
			t.Errorf("%s /scale = %+v, want selector %q and 1 replica", version, scale, want)
		}
	}
}

func TestScaleSubresource(t *testing.T) {
	s, ns, ctx, v2, _ := newAPI(t)
	writeStatus(ctx, t, v2, mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr.To[int32](2)}}), 2)
	scale, err := v2.GetScale(ctx, "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if scale.Spec.Replicas != 2 || scale.Status.Selector != "app=plain" || scale.Status.Replicas != 2 {
		t.Errorf("scale = %+v", scale)
	}
	scale.Spec.Replicas = 5
	if _, err := v2.UpdateScale(ctx, "plain", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := v2.Get(ctx, "plain", metav1.GetOptions{}); *got.Spec.Replicas != 5 {
		t.Errorf("spec.replicas after scale = %d", *got.Spec.Replicas)
	}
	// A stale resourceVersion in the Scale conflicts.
	if _, err := v2.UpdateScale(ctx, "plain", scale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale scale: err = %v, want 409", err)
	}
	patch := []byte(`{"spec":{"replicas":-1}}`)
	err = s.Client.OperatorV1alpha2().RESTClient().Patch(types.MergePatchType).Namespace(ns).Resource("nginxoperators").Name("plain").SubResource("scale").Body(patch).Do(ctx).Error()
	if !apierrors.IsInvalid(err) {
		t.Errorf("negative scale: err = %v, want 422", err)
	}

	mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "qps"}, Spec: v1alpha2.NginxOperatorSpec{QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}}})
	qpsScale, err := v2.GetScale(ctx, "qps", metav1.GetOptions{})
	if err != nil || qpsScale.Spec.Replicas != 3 {
		t.Fatalf("qps scale = %+v, %v; want 3 replicas", qpsScale, err)
	}
	qpsScale.Spec.Replicas = 6
	_, err = v2.UpdateScale(ctx, "qps", qpsScale, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "QPS mode") {
		t.Errorf("scaling a QPS-mode object: err = %v, want 422 mentioning QPS mode", err)
	}
}

func TestServerSideApplyWithFieldManagersAndConflicts(t *testing.T) {
	_, ns, ctx, v2, _ := newAPI(t)
	cfg := applyv1alpha2.NginxOperator("applied", ns).WithSpec(applyv1alpha2.NginxOperatorSpec().WithReplicas(2).WithImage("nginx:1.26"))
	got, err := v2.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ManagedFields) == 0 || got.ManagedFields[0].Manager != "alice" {
		t.Errorf("managedFields = %+v", got.ManagedFields)
	}
	other := applyv1alpha2.NginxOperator("applied", ns).WithSpec(applyv1alpha2.NginxOperatorSpec().WithReplicas(3))
	_, err = v2.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Fatalf("second manager: err = %v, want a conflict on .spec.replicas", err)
	}
	forced, err := v2.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil || *forced.Spec.Replicas != 3 || forced.Spec.Image != "nginx:1.26" {
		t.Fatalf("forced apply: %v %+v", err, forced)
	}
	// Status is reset on the main resource, so applying it there changes nothing.
	withStatus := applyv1alpha2.NginxOperator("applied", ns).WithStatus(applyv1alpha2.NginxOperatorStatus().WithReplicas(7))
	st, err := v2.Apply(ctx, withStatus, metav1.ApplyOptions{FieldManager: "carol"})
	if err != nil || st.Status.Replicas != 0 {
		t.Errorf("status applied through main resource: %v replicas=%d", err, st.Status.Replicas)
	}
	st, err = v2.ApplyStatus(ctx, withStatus, metav1.ApplyOptions{FieldManager: "carol"})
	if err != nil || st.Status.Replicas != 7 || *st.Spec.Replicas != 3 {
		t.Errorf("status apply: %v %+v", err, st)
	}
}

func TestSelectorsAndPagination(t *testing.T) {
	_, _, ctx, v2, v1 := newAPI(t)
	for _, obj := range []*v1alpha2.NginxOperator{richObject("rich"),
		{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}, {ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, {ObjectMeta: metav1.ObjectMeta{Name: "stock"}}} {
		mustCreate(ctx, t, v2, obj)
	}
	list, err := v2.List(ctx, metav1.ListOptions{LabelSelector: "tier=edge"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "rich" {
		t.Errorf("label selector: %v %d items", err, len(list.Items))
	}
	list, err = v2.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=legacy"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "legacy" {
		t.Errorf("field selector: %v %d items", err, len(list.Items))
	}
	if _, err := v2.List(ctx, metav1.ListOptions{FieldSelector: "spec.nope=1"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unknown field selector: err = %v, want 400", err)
	}
	var names []string
	opts := metav1.ListOptions{Limit: 3}
	for {
		page, err := v1.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > 3 {
			t.Fatalf("page of %d items with limit 3", len(page.Items))
		}
		for _, item := range page.Items {
			names = append(names, item.Name)
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	if strings.Join(names, ",") != "legacy,plain,rich,stock" {
		t.Errorf("paged through %v, want the 4 objects in name order", names)
	}
}

func TestWatchFromAResourceVersion(t *testing.T) {
	_, _, ctx, v2, v1 := newAPI(t)
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := v1.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=watched"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreate(ctx, t, v2, richObject("watched"))
	if err := v2.Delete(ctx, "watched", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []watch.EventType
	timeout := time.After(30 * time.Second)
	for len(got) < 2 {
		select {
		case ev := <-w.ResultChan():
			obj, ok := ev.Object.(*v1alpha1.NginxOperator)
			if !ok {
				t.Fatalf("event object %T", ev.Object)
			}
			if obj.Spec.Port == nil || *obj.Spec.Port != 80 { // the Service's port
				t.Errorf("watched object not converted to v1alpha1: %+v", obj.Spec)
			}
			got = append(got, ev.Type)
		case <-timeout:
			t.Fatalf("events so far %v", got)
		}
	}
	if got[0] != watch.Added || got[1] != watch.Deleted {
		t.Errorf("events = %v", got)
	}
}

func TestRawHTTPTableYAMLProtobufAnonymousHealthOpenAPI(t *testing.T) {
	s, ns, ctx, v2, _ := newAPI(t)
	mustCreate(ctx, t, v2, richObject("rich"))
	admin := s.httpClient(false)
	list := s.URL("/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators")
	resp := get(t, admin, list, "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	decode(t, resp, &table)
	if len(table.ColumnDefinitions) != 11 || table.ColumnDefinitions[1].Name != "Ready" || len(table.Rows) != 1 {
		t.Errorf("table = %+v, %d rows", table.ColumnDefinitions, len(table.Rows))
	}
	if resp := get(t, admin, list, "application/yaml"); resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "yaml") {
		t.Errorf("yaml: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := get(t, admin, list, "application/vnd.kubernetes.protobuf"); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
		t.Errorf("protobuf: status %d %s, want 200 protobuf", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := get(t, admin, list, "application/vnd.kubernetes.protobuf, application/json"); resp.StatusCode != http.StatusOK {
		t.Errorf("protobuf with JSON fallback: status %d, want 200", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, list, strings.NewReader("\x6b\x38\x73\x00"))
	req.Header.Set("Content-Type", "application/vnd.kubernetes.protobuf")
	if resp, err := admin.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("protobuf body: %v %v, want 400", err, resp)
	}
	anonymous := s.httpClient(true)
	for _, path := range []string{"/apis", "/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators", "/metrics", "/openapi/v2"} {
		if resp := get(t, anonymous, s.URL(path), "application/json"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous %s: %d, want 401", path, resp.StatusCode)
		}
	}
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/readyz/etcd"} {
		if resp := get(t, anonymous, s.URL(path), "text/plain"); resp.StatusCode != http.StatusOK {
			t.Errorf("anonymous %s: %d, want 200", path, resp.StatusCode)
		}
	}
	if body := readBody(t, get(t, admin, s.URL("/metrics"), "text/plain")); !strings.Contains(body, "apiserver_request_total") {
		t.Errorf("/metrics lacks apiserver_request_total")
	}
	if body := readBody(t, get(t, admin, s.URL("/openapi/v2"), "application/json")); !strings.Contains(body, "com.example.operator.v1alpha2.NginxOperator") {
		t.Errorf("/openapi/v2 lacks the NginxOperator definition")
	}
	if body := readBody(t, get(t, admin, s.URL("/openapi/v3/apis/operator.example.com/v1alpha1"), "application/json")); !strings.Contains(body, "forceRedploy") {
		t.Errorf("/openapi/v3 for v1alpha1 lacks forceRedploy")
	}
	var resources metav1.APIResourceList
	decode(t, get(t, admin, s.URL("/apis/operator.example.com/v1alpha2"), "application/json"), &resources)
	found := map[string]bool{}
	for _, r := range resources.APIResources {
		found[r.Name] = true
		if r.Name == "nginxoperators" && (len(r.ShortNames) != 1 || r.ShortNames[0] != "ngx") {
			t.Errorf("short names = %v", r.ShortNames)
		}
	}
	if !found["nginxoperators"] || !found["nginxoperators/status"] || !found["nginxoperators/scale"] {
		t.Errorf("discovery = %v", found)
	}
}

func TestDeleteThroughV1alpha1(t *testing.T) {
	_, _, ctx, v2, v1 := newAPI(t)
	mustCreate(ctx, t, v2, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}})
	if err := v1.Delete(ctx, "legacy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v2.Get(ctx, "legacy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: err = %v, want 404", err)
	}
}

func TestRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first := startServer(t, dir)
	if _, err := first.Client.OperatorV1alpha2().NginxOperators(ns).Create(ctx, richObject("durable"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first.stop()

	second := startServer(t, dir)
	got, err := second.Client.OperatorV1alpha2().NginxOperators(ns).Get(ctx, "durable", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if got.Spec.Image != "nginx:1.25" || len(got.Spec.Ports) != 2 {
		t.Errorf("after restart: %+v", got.Spec)
	}
	var scale autoscalingv1.Scale
	if err := second.Client.OperatorV1alpha2().RESTClient().Get().Namespace(ns).Resource("nginxoperators").Name("durable").SubResource("scale").Do(ctx).Into(&scale); err != nil || scale.Spec.Replicas != 2 {
		t.Errorf("scale after restart: %v %+v", err, scale)
	}
}

func get(t *testing.T, c *http.Client, url, accept string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func decode(t *testing.T, resp *http.Response, into interface{}) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", resp.Request.URL, resp.StatusCode, readBody(t, resp))
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatal(err)
	}
}
