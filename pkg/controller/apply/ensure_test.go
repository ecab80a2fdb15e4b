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

package apply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const manager = "test-manager"

// owner is any object; a Secret keeps the test free of the operator's types.
var owner = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "owner-uid"}}

var configMaps = Kind[*corev1.ConfigMap, *corev1ac.ConfigMapApplyConfiguration]{Name: "ConfigMap", Extract: corev1ac.ExtractConfigMap}

func desired(value string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap("web", "shop").
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("Secret").WithName("web").WithUID(owner.UID).WithController(true)).
		WithData(map[string]string{"k": value})
}

// newApplier records writes and events; the fake client serves as cache and API server.
func newApplier(t *testing.T, objs ...client.Object) (*Applier, *[]string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithReturnManagedFields().WithObjects(objs...).Build()
	var log []string
	return &Applier{Client: c, APIReader: c, FieldManager: manager, OwnerKind: "Owner",
		Event: func(_ client.Object, _, reason, _, note string, args ...any) {
			log = append(log, "event "+reason+": "+fmt.Sprintf(note, args...))
		},
		CountWrite: func(kind string, err error) error {
			log = append(log, fmt.Sprintf("write %s %v", kind, err))
			return err
		},
	}, &log
}

// TestEnsureWritesOnlyWhatDiffers: a missing child is created, an unchanged one causes
// no write, a changed one is applied again.
func TestEnsureWritesOnlyWhatDiffers(t *testing.T) {
	a, log := newApplier(t)
	ctx := context.Background()
	for _, step := range []struct {
		value         string
		found, wrote  bool
		wantEventLike string
	}{
		{"a", false, true, "Created"},
		{"a", true, false, ""},
		{"b", true, true, "Updated"},
	} {
		*log = nil
		res, err := Ensure(ctx, a, owner, "web", &corev1.ConfigMap{}, desired(step.value), configMaps)
		if err != nil || res.Found != step.found || res.Applied != step.wrote || res.Blocked != "" {
			t.Fatalf("value %s: %+v, %v", step.value, res, err)
		}
		if got := strings.Join(*log, "; "); step.wrote != strings.Contains(got, "write ConfigMap <nil>") || !strings.Contains(got, step.wantEventLike) {
			t.Errorf("value %s: %s", step.value, got)
		}
	}
}

// TestEnsureNeverTakesOverAStranger: a same-named object the owner does not control is
// reported and left as it is.
func TestEnsureNeverTakesOverAStranger(t *testing.T) {
	stranger := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Data: map[string]string{"k": "theirs"}}
	for _, uncached := range []bool{false, true} {
		a, log := newApplier(t, stranger.DeepCopy())
		kind := configMaps
		kind.Uncached = uncached
		res, err := Ensure(context.Background(), a, owner, "web", &corev1.ConfigMap{}, desired("ours"), kind)
		if err != nil || res.Found || res.Applied || res.Blocked != "ConfigMap shop/web exists and is not controlled by this Owner; rename or delete it" {
			t.Fatalf("uncached %v: %+v, %v", uncached, res, err)
		}
		if got := strings.Join(*log, "; "); strings.Contains(got, "write") || !strings.Contains(got, "OwnershipConflict") {
			t.Errorf("uncached %v: %s", uncached, got)
		}
		live := &corev1.ConfigMap{}
		if err := a.Client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web"}, live); err != nil || live.Data["k"] != "theirs" {
			t.Errorf("uncached %v: the stranger is now %+v, %v", uncached, live.Data, err)
		}
	}
}

// TestDeleteIfOwnedLeavesStrangersAlone: only a child the owner controls is deleted.
func TestDeleteIfOwnedLeavesStrangersAlone(t *testing.T) {
	ours := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ours", UID: "ours-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "web", UID: owner.UID, Controller: ptr.To(true)}}}}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "theirs", UID: types.UID("theirs-uid")}}
	a, log := newApplier(t, ours, theirs)
	ctx := context.Background()
	for _, name := range []string{"ours", "theirs", "absent"} {
		if err := a.DeleteIfOwned(ctx, owner, name, &corev1.ConfigMap{}, "ConfigMap"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got := strings.Join(*log, "; "); got != "write ConfigMap <nil>; event Deleted: deleted ConfigMap ours, which the spec no longer asks for" {
		t.Errorf("writes and events: %s", got)
	}
	if err := a.Client.Get(ctx, client.ObjectKeyFromObject(theirs), &corev1.ConfigMap{}); err != nil {
		t.Errorf("theirs: %v", err)
	}
}

// TestSameFieldsIgnoresEmptyValues: managed fields may own an empty struct, which asserts
// no value.
func TestSameFieldsIgnoresEmptyValues(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		same bool
	}{
		{map[string]any{"spec": map[string]any{"x": 1}}, map[string]any{"spec": map[string]any{"x": 1, "status": map[string]any{}}}, true},
		{map[string]any{"l": []any{}}, map[string]any{}, true},
		{map[string]any{"v": nil}, map[string]any{}, true},
		{map[string]any{"x": 1}, map[string]any{"x": 2}, false},
		{map[string]any{"l": []any{1, map[string]any{}}}, map[string]any{"l": []any{1}}, true},
	} {
		if same, err := sameFields(tc.a, tc.b); err != nil || same != tc.same {
			t.Errorf("sameFields(%v, %v) = %v, %v; want %v", tc.a, tc.b, same, err, tc.same)
		}
	}
}
