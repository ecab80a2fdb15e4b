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

package nginxoperator

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/install"
)

const (
	v1alpha1Version = "operator.example.com/v1alpha1"
	v1alpha2Version = "operator.example.com/v1alpha2"
)

// owned builds a managed fields entry the way the field manager stores it.
func owned(manager string, op metav1.ManagedFieldsOperationType, apiVersion, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, APIVersion: apiVersion, Subresource: subresource,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields),
	}
}

// ownership renders entries as "manager operation subresource apiVersion" -> fields,
// ignoring order and timestamps.
func ownership(entries []metav1.ManagedFieldsEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		out[fmt.Sprintf("%s %s %q %s", e.Manager, e.Operation, e.Subresource, e.APIVersion)] = e.FieldsV1.GetRawString()
	}
	return out
}

// appliedWithReplicas is an object created by "apply-a" with replicas, touched through
// v1alpha1 by "legacy" and given status by the controller.
func appliedWithReplicas() *operator.NginxOperator {
	o := sample()
	o.ManagedFields = []metav1.ManagedFieldsEntry{
		owned("apply-a", metav1.ManagedFieldsOperationApply, v1alpha2Version, "", `{"f:spec":{"f:image":{},"f:replicas":{}}}`),
		owned("legacy", metav1.ManagedFieldsOperationUpdate, v1alpha1Version, "", `{"f:spec":{"f:port":{}}}`),
		owned("controller", metav1.ManagedFieldsOperationUpdate, v1alpha2Version, "status", `{"f:status":{"f:replicas":{}}}`),
	}
	return o
}

// scaleWrite plays the scale endpoint's handler: it changes the Scale it is given and
// records the change with a real field manager for autoscaling/v1 Scale.
type scaleWrite struct {
	t       *testing.T
	manager string
	mutate  func(*autoscalingv1.Scale)
	// given is the Scale the handler received, managedFields included.
	given *autoscalingv1.Scale
}

func (w *scaleWrite) Preconditions() *metav1.Preconditions { return nil }

func (w *scaleWrite) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	w.given = old.(*autoscalingv1.Scale).DeepCopy()
	updated := w.given.DeepCopy()
	w.mutate(updated)
	return scaleFieldManager(w.t).Update(w.given, updated, w.manager)
}

func scaleFieldManager(t *testing.T) *managedfields.FieldManager {
	t.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(autoscalingv1.AddToScheme(scheme))
	internal := schema.GroupVersion{Group: autoscalingv1.GroupName, Version: runtime.APIVersionInternal}
	scheme.AddKnownTypes(internal, &autoscalingv1.Scale{})
	fm, err := managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(), scheme, scheme, scheme, scaleKind, internal, "scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	return fm
}

func requestThrough(version string) context.Context {
	gv, _ := schema.ParseGroupVersion(version)
	return genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "update", APIGroup: gv.Group, APIVersion: gv.Version,
		Namespace: "default", Resource: "nginxoperators", Subresource: "scale", Name: "web",
	})
}

func TestScaleHandsReplicasOwnershipToTheScaler(t *testing.T) {
	for _, version := range servedVersions {
		t.Run(version, func(t *testing.T) {
			write := &scaleWrite{t: t, manager: "kubectl-scale", mutate: func(s *autoscalingv1.Scale) { s.Spec.Replicas = 4 }}
			info := &scaleUpdatedObjectInfo{name: "web", reqObjInfo: write}
			obj, err := info.UpdatedObject(requestThrough(version), appliedWithReplicas())
			if err != nil {
				t.Fatal(err)
			}

			// The scale handler must see who owns spec.replicas, or it cannot take it over.
			wantGiven := map[string]string{`apply-a Apply "" autoscaling/v1`: `{"f:spec":{"f:replicas":{}}}`}
			if got := ownership(write.given.ManagedFields); !reflect.DeepEqual(got, wantGiven) {
				t.Errorf("Scale given to the handler is owned by %v, want %v", got, wantGiven)
			}

			o := obj.(*operator.NginxOperator)
			if o.Spec.Replicas == nil || *o.Spec.Replicas != 4 {
				t.Errorf("spec.replicas = %v, want 4", o.Spec.Replicas)
			}
			want := map[string]string{
				`apply-a Apply "" ` + v1alpha2Version:           `{"f:spec":{"f:image":{}}}`,
				`legacy Update "" ` + v1alpha1Version:           `{"f:spec":{"f:port":{}}}`,
				`controller Update "status" ` + v1alpha2Version: `{"f:status":{"f:replicas":{}}}`,
				// Recorded in the version the scale request came through, as for Deployments.
				`kubectl-scale Update "scale" ` + version: `{"f:spec":{"f:replicas":{}}}`,
			}
			if got := ownership(o.ManagedFields); !reflect.DeepEqual(got, want) {
				t.Errorf("after scale the NginxOperator is owned by\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// An NginxOperator applied without replicas (defaulted, owned by nobody): the first
// scaler, as an HPA is, becomes the owner, so a later apply of replicas conflicts.
func TestFirstScalerOwnsDefaultedReplicas(t *testing.T) {
	before := appliedWithReplicas()
	before.UID = "0f4a5e33-8c1b-4f0e-9a57-1f0f9d7c2b10" // an update: the field manager skips untracked objects
	before.ManagedFields[0] = owned("apply-a", metav1.ManagedFieldsOperationApply, v1alpha2Version, "", `{"f:spec":{"f:image":{}}}`)
	write := &scaleWrite{t: t, manager: "hpa", mutate: func(s *autoscalingv1.Scale) { s.Spec.Replicas = 4 }}
	obj, err := (&scaleUpdatedObjectInfo{name: "web", reqObjInfo: write}).UpdatedObject(requestThrough(v1alpha2Version), before)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		`apply-a Apply "" ` + v1alpha2Version:           `{"f:spec":{"f:image":{}}}`,
		`legacy Update "" ` + v1alpha1Version:           `{"f:spec":{"f:port":{}}}`,
		`controller Update "status" ` + v1alpha2Version: `{"f:status":{"f:replicas":{}}}`,
		`hpa Update "scale" ` + v1alpha2Version:         `{"f:spec":{"f:replicas":{}}}`,
	}
	if got := ownership(obj.(*operator.NginxOperator).ManagedFields); !reflect.DeepEqual(got, want) {
		t.Errorf("after the first scale the NginxOperator is owned by\n%v\nwant\n%v", got, want)
	}
}

func TestScaleWithoutReplicaChangeKeepsOwnership(t *testing.T) {
	write := &scaleWrite{t: t, manager: "kubectl-scale", mutate: func(s *autoscalingv1.Scale) {}}
	before := appliedWithReplicas()
	obj, err := (&scaleUpdatedObjectInfo{name: "web", reqObjInfo: write}).UpdatedObject(requestThrough(v1alpha2Version), before)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ownership(obj.(*operator.NginxOperator).ManagedFields), ownership(before.ManagedFields); !reflect.DeepEqual(got, want) {
		t.Errorf("a Scale write that changed nothing moved ownership:\n%v\nwant\n%v", got, want)
	}
}

func TestScaleInQPSModeLeavesOwnershipAlone(t *testing.T) {
	before := appliedWithReplicas()
	before.Spec.Replicas = nil
	before.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}
	before.ManagedFields[0] = owned("apply-a", metav1.ManagedFieldsOperationApply, v1alpha2Version, "", `{"f:spec":{"f:image":{},"f:qps":{"f:singlePodQPS":{},"f:totalQPS":{}}}}`)

	// Applying the current count to /scale succeeds but must not record ownership of
	// a spec.replicas that stays unset.
	write := &scaleWrite{t: t, manager: "hpa", mutate: func(s *autoscalingv1.Scale) { s.Spec.Replicas = 3 }}
	obj, err := (&scaleUpdatedObjectInfo{name: "web", reqObjInfo: write}).UpdatedObject(requestThrough(v1alpha2Version), before)
	if err != nil {
		t.Fatal(err)
	}
	o := obj.(*operator.NginxOperator)
	if o.Spec.Replicas != nil {
		t.Errorf("QPS mode: spec.replicas = %d, want unset", *o.Spec.Replicas)
	}
	if got, want := ownership(o.ManagedFields), ownership(before.ManagedFields); !reflect.DeepEqual(got, want) {
		t.Errorf("QPS mode: ownership changed:\n%v\nwant\n%v", got, want)
	}

	write.mutate = func(s *autoscalingv1.Scale) { s.Spec.Replicas = 5 }
	if _, err := (&scaleUpdatedObjectInfo{name: "web", reqObjInfo: write}).UpdatedObject(requestThrough(v1alpha2Version), before); err == nil {
		t.Error("QPS mode accepted a replica change")
	}
}

func TestScaleReadShowsReplicasOwners(t *testing.T) {
	o := appliedWithReplicas()
	o.ManagedFields = append(o.ManagedFields,
		owned("kubectl-scale", metav1.ManagedFieldsOperationUpdate, v1alpha1Version, "scale", `{"f:spec":{"f:replicas":{}}}`))
	scale, err := scaleWithManagedFields(o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		`apply-a Apply "" autoscaling/v1`:             `{"f:spec":{"f:replicas":{}}}`,
		`kubectl-scale Update "scale" autoscaling/v1`: `{"f:spec":{"f:replicas":{}}}`,
	}
	if got := ownership(scale.ManagedFields); !reflect.DeepEqual(got, want) {
		t.Errorf("Scale managedFields = %v, want %v", got, want)
	}
	if scale.Spec.Replicas != 2 {
		t.Errorf("Scale replicas = %d, want 2", scale.Spec.Replicas)
	}
}

// TestReplicasPathInEveryVersion guards the mapping against a new version: managed
// fields of a version without a replicas path would be dropped by every write to /scale.
func TestReplicasPathInEveryVersion(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	versions := scheme.VersionsForGroupKind(operator.Kind("NginxOperator"))
	if len(versions) != len(replicasPathByVersion) {
		t.Errorf("replicas paths for %v, but the scheme has versions %v", replicasPathByVersion, versions)
	}
	for _, gv := range versions {
		path, ok := replicasPathByVersion[gv.String()]
		if !ok {
			t.Errorf("no replicas path for %s", gv)
			continue
		}
		// The path must lead to the replica count in that version's wire form.
		o := sample()
		o.Spec.Replicas = ptr.To[int32](7)
		versioned, err := scheme.ConvertToVersion(o, gv)
		if err != nil {
			t.Fatal(err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
		if err != nil {
			t.Fatal(err)
		}
		var value interface{} = u
		for _, element := range path {
			value = value.(map[string]interface{})[*element.FieldName]
		}
		if value != int64(7) {
			t.Errorf("%s: %s holds %v, want the replica count 7", gv, path, value)
		}
	}
}
