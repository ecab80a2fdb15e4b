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
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Server-side apply ownership across the main resource and its subresources: the
// scaler owns spec.replicas after a write to /scale (kubernetes issue 82046), and an
// apply to /status owns nothing the status strategy throws away.

// ownershipVersions are the served versions with a manifest each, as users write them.
var ownershipVersions = []struct {
	version  string
	manifest string // %s is the name
}{
	{"v1alpha2", `{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":%q,"namespace":"default"},"spec":{"replicas":2,"image":"nginx:1.26"}}`},
	{"v1alpha1", `{"apiVersion":"operator.example.com/v1alpha1","kind":"NginxOperator","metadata":{"name":%q,"namespace":"default"},"spec":{"replicas":2,"port":8080}}`},
}

func TestScaleOwnership(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	for _, v := range ownershipVersions {
		t.Run(v.version, func(t *testing.T) {
			c := groupClient(s, v.version)
			name := "scaled-" + v.version
			manifest := fmt.Sprintf(v.manifest, name)
			apiVersion := "operator.example.com/" + v.version

			if _, err := applyNginxOperator(ctx, c, name, "", manifest, "manager-a", false); err != nil {
				t.Fatal(err)
			}
			obj := getNginxOperator(ctx, t, c, name, "")
			if owners := ownersOf(t, obj.GetManagedFields(), "spec", "replicas"); !equal(owners, "manager-a Apply") {
				t.Fatalf("after apply spec.replicas is owned by %v", owners)
			}
			if owners := ownersOf(t, getScale(ctx, t, c, name).ManagedFields, "spec", "replicas"); !equal(owners, "manager-a Apply") {
				t.Errorf("GET /scale: spec.replicas owned by %v, want manager-a", owners)
			}

			scaleTo(ctx, t, s, v.version, name, 4, "kubectl-scale")
			obj = getNginxOperator(ctx, t, c, name, "")
			if got := replicasOf(t, obj); got != 4 {
				t.Fatalf("replicas after scale = %d, want 4", got)
			}
			// The scaler owns spec.replicas, recorded in the version it scaled through,
			// and the applier keeps the rest of what it applied.
			if owners := ownersOf(t, obj.GetManagedFields(), "spec", "replicas"); !equal(owners, "kubectl-scale Update") {
				t.Errorf("after scale spec.replicas is owned by %v, want kubectl-scale only", owners)
			}
			for _, e := range obj.GetManagedFields() {
				if e.Manager == "kubectl-scale" && (e.APIVersion != apiVersion || e.Subresource != "scale") {
					t.Errorf("scaler entry recorded as %s subresource %q, want %s subresource scale", e.APIVersion, e.Subresource, apiVersion)
				}
				if e.Manager == "manager-a" && len(ownersOf(t, []metav1.ManagedFieldsEntry{e}, "spec")) == 0 {
					t.Errorf("manager-a lost the rest of its spec: %s", e.FieldsV1.GetRawString())
				}
			}
			if owners := ownersOf(t, getScale(ctx, t, c, name).ManagedFields, "spec", "replicas"); !equal(owners, "kubectl-scale Update") {
				t.Errorf("GET /scale: spec.replicas owned by %v, want kubectl-scale", owners)
			}

			// Re-applying the same manifest must not silently undo the scale.
			_, err := applyNginxOperator(ctx, c, name, "", manifest, "manager-a", false)
			if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), ".spec.replicas") || !strings.Contains(err.Error(), "kubectl-scale") {
				t.Fatalf("re-apply after scale: err = %v, want a 409 conflict with kubectl-scale on .spec.replicas", err)
			}
			if got := replicasOf(t, getNginxOperator(ctx, t, c, name, "")); got != 4 {
				t.Errorf("replicas after the refused re-apply = %d, want 4", got)
			}

			if _, err := applyNginxOperator(ctx, c, name, "", manifest, "manager-a", true); err != nil {
				t.Fatalf("forced re-apply: %v", err)
			}
			obj = getNginxOperator(ctx, t, c, name, "")
			if got := replicasOf(t, obj); got != 2 {
				t.Errorf("replicas after forced re-apply = %d, want 2", got)
			}
			if owners := ownersOf(t, obj.GetManagedFields(), "spec", "replicas"); !equal(owners, "manager-a Apply") {
				t.Errorf("after forced re-apply spec.replicas is owned by %v, want manager-a only", owners)
			}
		})
	}

	t.Run("applied through v1alpha1, scaled through v1alpha2", func(t *testing.T) {
		c := groupClient(s, "v1alpha1")
		name := "scaled-across-versions"
		manifest := fmt.Sprintf(ownershipVersions[1].manifest, name)
		if _, err := applyNginxOperator(ctx, c, name, "", manifest, "manager-a", false); err != nil {
			t.Fatal(err)
		}
		scaleTo(ctx, t, s, "v1alpha2", name, 4, "kubectl-scale")
		_, err := applyNginxOperator(ctx, c, name, "", manifest, "manager-a", false)
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), ".spec.replicas") || !strings.Contains(err.Error(), "kubectl-scale") {
			t.Fatalf("re-apply through v1alpha1 after a v1alpha2 scale: err = %v, want a conflict with kubectl-scale on .spec.replicas", err)
		}
		if _, err := applyNginxOperator(ctx, c, name, "", manifest, "manager-a", true); err != nil {
			t.Fatalf("forced re-apply: %v", err)
		}
		obj := getNginxOperator(ctx, t, c, name, "")
		if got, owners := replicasOf(t, obj), ownersOf(t, obj.GetManagedFields(), "spec", "replicas"); got != 2 || !equal(owners, "manager-a Apply") {
			t.Errorf("after forced re-apply replicas=%d owners=%v, want 2 owned by manager-a", got, owners)
		}
	})

	t.Run("apply to /scale conflicts with the applier of the object", func(t *testing.T) {
		c := groupClient(s, "v1alpha2")
		name := "scale-applied"
		if _, err := applyNginxOperator(ctx, c, name, "", fmt.Sprintf(ownershipVersions[0].manifest, name), "manager-a", false); err != nil {
			t.Fatal(err)
		}
		scale := fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":%q,"namespace":"default"},"spec":{"replicas":7}}`, name)
		_, err := applyNginxOperator(ctx, c, name, "scale", scale, "hpa", false)
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "manager-a") {
			t.Fatalf("apply to /scale: err = %v, want a conflict with manager-a", err)
		}
		if _, err := applyNginxOperator(ctx, c, name, "scale", scale, "hpa", true); err != nil {
			t.Fatalf("forced apply to /scale: %v", err)
		}
		obj := getNginxOperator(ctx, t, c, name, "")
		if got, owners := replicasOf(t, obj), ownersOf(t, obj.GetManagedFields(), "spec", "replicas"); got != 7 || !equal(owners, "hpa Apply") {
			t.Errorf("after forced apply to /scale replicas=%d owners=%v, want 7 owned by hpa", got, owners)
		}
	})

	t.Run("a scale write that leaves replicas alone moves no ownership", func(t *testing.T) {
		c := groupClient(s, "v1alpha2")
		name := "scale-status-only"
		if _, err := applyNginxOperator(ctx, c, name, "", fmt.Sprintf(ownershipVersions[0].manifest, name), "manager-a", false); err != nil {
			t.Fatal(err)
		}
		err := c.Patch(types.MergePatchType).Namespace(ns).Resource("nginxoperators").Name(name).SubResource("scale").
			Param("fieldManager", "kubectl-scale").Body([]byte(`{"status":{"replicas":42}}`)).Do(ctx).Error()
		if err != nil {
			t.Fatal(err)
		}
		obj := getNginxOperator(ctx, t, c, name, "")
		if got, owners := replicasOf(t, obj), ownersOf(t, obj.GetManagedFields(), "spec", "replicas"); got != 2 || !equal(owners, "manager-a Apply") {
			t.Errorf("replicas=%d owners=%v, want 2 owned by manager-a", got, owners)
		}
	})
}

func TestStatusApplyOwnsOnlyStatus(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	statusOf := map[string]string{
		"v1alpha2": `{"replicas":3}`,
		"v1alpha1": `{"conditions":[{"type":"Available","status":"True","reason":"OperatorSucceeded","message":"test","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`,
	}
	for _, v := range ownershipVersions {
		t.Run(v.version, func(t *testing.T) {
			c := groupClient(s, v.version)
			name := "status-" + v.version
			withLabels := func(manifest, labels string) string {
				return strings.Replace(manifest, `"namespace":"default"}`, `"namespace":"default","labels":`+labels+`}`, 1)
			}
			if _, err := applyNginxOperator(ctx, c, name, "", withLabels(fmt.Sprintf(v.manifest, name), `{"team":"a"}`), "owner", false); err != nil {
				t.Fatal(err)
			}

			// The status writer sends labels, annotations, finalizers and spec too: the
			// status subresource drops them, so it must not record owning them.
			status := func(labels string) string {
				return fmt.Sprintf(`{"apiVersion":"operator.example.com/%s","kind":"NginxOperator","metadata":{"name":%q,"namespace":"default",`+
					`"labels":%s,"annotations":{"note":"y"},"finalizers":["example.com/keep"]},"spec":{"replicas":9},"status":%s}`,
					v.version, name, labels, statusOf[v.version])
			}
			if _, err := applyNginxOperator(ctx, c, name, "status", status(`{"extra":"x"}`), "status-writer", false); err != nil {
				t.Fatalf("status apply: %v", err)
			}
			obj := getNginxOperator(ctx, t, c, name, "")
			if labels := obj.GetLabels(); len(labels) != 1 || labels["team"] != "a" {
				t.Errorf("labels after status apply = %v, want team=a only", labels)
			}
			if _, found := obj.GetAnnotations()["note"]; found || len(obj.GetFinalizers()) != 0 || replicasOf(t, obj) != 2 {
				t.Errorf("status apply changed annotations %v, finalizers %v or replicas %d", obj.GetAnnotations(), obj.GetFinalizers(), replicasOf(t, obj))
			}
			if st, _, _ := unstructured.NestedMap(obj.Object, "status"); len(st) == 0 {
				t.Errorf("status apply wrote no status: %v", obj.Object["status"])
			}
			var statusEntries int
			for _, e := range obj.GetManagedFields() {
				if e.Manager != "status-writer" {
					continue
				}
				statusEntries++
				var fields map[string]interface{}
				if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
					t.Fatal(err)
				}
				if _, ok := fields["f:status"]; !ok || len(fields) != 1 || e.Subresource != "status" {
					t.Errorf("status-writer owns %s (subresource %q), want only status", e.FieldsV1.GetRawString(), e.Subresource)
				}
			}
			if statusEntries != 1 {
				t.Errorf("status-writer has %d managedFields entries, want 1", statusEntries)
			}

			// A label another manager owns is no conflict either: it is not written.
			if _, err := applyNginxOperator(ctx, c, name, "status", status(`{"team":"b"}`), "status-writer", false); err != nil {
				t.Errorf("status apply with a label owned by another manager: %v", err)
			}

			// Proof that nothing is owned by the status writer: the owner can set the
			// labels the status writer sent to other values without a conflict.
			if _, err := applyNginxOperator(ctx, c, name, "", withLabels(fmt.Sprintf(v.manifest, name), `{"team":"c","extra":"z"}`), "owner", false); err != nil {
				t.Errorf("owner's label change conflicts after a status apply: %v", err)
			}
		})
	}
}

func groupClient(s *server, version string) rest.Interface {
	if version == "v1alpha1" {
		return s.Client.OperatorV1alpha1().RESTClient()
	}
	return s.Client.OperatorV1alpha2().RESTClient()
}

// applyNginxOperator server-side applies body to the object or to one of its
// subresources.
func applyNginxOperator(ctx context.Context, c rest.Interface, name, subresource, body, manager string, force bool) ([]byte, error) {
	req := c.Patch(types.ApplyPatchType).Namespace(ns).Resource("nginxoperators").Name(name).
		Param("fieldManager", manager).Body([]byte(body))
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	if force {
		req = req.Param("force", "true")
	}
	// Result.Error, unlike Raw, decodes the Status with the conflict's message.
	result := req.Do(ctx)
	data, _ := result.Raw()
	return data, result.Error()
}

func getNginxOperator(ctx context.Context, t *testing.T, c rest.Interface, name, subresource string) *unstructured.Unstructured {
	t.Helper()
	req := c.Get().Namespace(ns).Resource("nginxoperators").Name(name)
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	result := req.Do(ctx)
	data, _ := result.Raw()
	if err := result.Error(); err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return obj
}

func getScale(ctx context.Context, t *testing.T, c rest.Interface, name string) *autoscalingv1.Scale {
	t.Helper()
	var scale autoscalingv1.Scale
	u := getNginxOperator(ctx, t, c, name, "scale")
	data, _ := json.Marshal(u.Object)
	if err := json.Unmarshal(data, &scale); err != nil {
		t.Fatal(err)
	}
	return &scale
}

// scaleTo sets the replicas through /scale as the given manager: with the clientset's
// UpdateScale (a PUT of the Scale it read) for v1alpha2, and with a merge patch, as
// kubectl scale sends, for v1alpha1.
func scaleTo(ctx context.Context, t *testing.T, s *server, version, name string, replicas int32, manager string) {
	t.Helper()
	if version == "v1alpha2" {
		nginxOperators := s.Client.OperatorV1alpha2().NginxOperators(ns)
		scale, err := nginxOperators.GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scale.Spec.Replicas = replicas
		if _, err := nginxOperators.UpdateScale(ctx, name, scale, metav1.UpdateOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
		return
	}
	err := groupClient(s, version).Patch(types.MergePatchType).Namespace(ns).Resource("nginxoperators").Name(name).SubResource("scale").
		Param("fieldManager", manager).Body([]byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))).Do(ctx).Error()
	if err != nil {
		t.Fatal(err)
	}
}

func replicasOf(t *testing.T, obj *unstructured.Unstructured) int64 {
	t.Helper()
	replicas, found, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if err != nil || !found {
		t.Fatalf("spec.replicas: found=%v err=%v in %v", found, err, obj.Object["spec"])
	}
	return replicas
}

// ownersOf lists, sorted, "manager operation" of the entries that own the field at path.
func ownersOf(t *testing.T, entries []metav1.ManagedFieldsEntry, path ...string) []string {
	t.Helper()
	var owners []string
	for _, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		var fields interface{}
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatal(err)
		}
		for _, element := range path {
			m, ok := fields.(map[string]interface{})
			if !ok {
				fields = nil
				break
			}
			fields = m["f:"+element]
		}
		if fields != nil {
			owners = append(owners, fmt.Sprintf("%s %s", e.Manager, e.Operation))
		}
	}
	sort.Strings(owners)
	return owners
}

func equal(got []string, want ...string) bool {
	return strings.Join(got, ",") == strings.Join(want, ",")
}
