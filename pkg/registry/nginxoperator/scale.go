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
	"cmp"
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

var scaleKind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// replicasPathByVersion says where each served version keeps the replica count, so
// that field ownership of spec.replicas moves between an NginxOperator and its Scale
// (kubernetes issue 82046). Managed fields of a version missing here would be dropped
// by a write to /scale, so every served version must be listed.
var replicasPathByVersion = func() managedfields.ResourcePathMappings {
	m := make(managedfields.ResourcePathMappings, len(servedVersions))
	for _, v := range servedVersions {
		m[v] = fieldpath.MakePathOrDie("spec", "replicas")
	}
	return m
}()

// storageVersion records scale ownership when a request carries no served version
// (a write from inside the server rather than through an endpoint).
var storageVersion = schema.GroupVersion{Group: operator.GroupName, Version: "v1alpha2"}

// ScaleREST serves the scale subresource as autoscaling/v1 Scale, backed by
// spec.replicas, status.replicas and status.selector. A scaler becomes the owner of
// spec.replicas, so a later server-side apply of another value conflicts. In QPS mode
// the replica count follows spec.qps, so writes are refused with 422 rather than
// silently dropping qps.
type ScaleREST struct {
	store *genericregistry.Store
}

var _ rest.Patcher = &ScaleREST{}

// GroupVersionKind reports autoscaling/v1 Scale whatever version serves the parent.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind { return scaleKind }

// New returns an empty Scale.
func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy is a no-op: the main resource owns the shared store.
func (r *ScaleREST) Destroy() {}

// Get returns the Scale of an NginxOperator.
func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return scaleWithManagedFields(obj.(*operator.NginxOperator))
}

// Update sets spec.replicas from a Scale.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, &scaleUpdatedObjectInfo{name: name, reqObjInfo: objInfo},
		toScaleCreateValidation(createValidation), toScaleUpdateValidation(updateValidation), false, options)
	if err != nil {
		return nil, false, err
	}
	scale, err := scaleWithManagedFields(obj.(*operator.NginxOperator))
	return scale, false, err
}

// ConvertToTable renders a Scale with the default columns.
func (r *ScaleREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return rest.NewDefaultTableConvertor(operator.Resource("nginxoperators/scale")).ConvertToTable(ctx, object, tableOptions)
}

func toScaleCreateValidation(f rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		return f(ctx, scaleFromNginxOperator(obj.(*operator.NginxOperator)))
	}
}

func toScaleUpdateValidation(f rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		return f(ctx, scaleFromNginxOperator(obj.(*operator.NginxOperator)), scaleFromNginxOperator(old.(*operator.NginxOperator)))
	}
}

func scaleFromNginxOperator(o *operator.NginxOperator) *autoscalingv1.Scale {
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name:              o.Name,
			Namespace:         o.Namespace,
			UID:               o.UID,
			ResourceVersion:   o.ResourceVersion,
			CreationTimestamp: o.CreationTimestamp,
		},
		Spec: autoscalingv1.ScaleSpec{Replicas: o.Spec.DesiredReplicas()},
		// The selector follows from the name: an HPA reading /scale before the controller's
		// first status write gets it too.
		Status: autoscalingv1.ScaleStatus{Replicas: o.Status.Replicas, Selector: cmp.Or(o.Status.Selector, operand.Selector(o.Name))},
	}
}

// scaleWithManagedFields is the Scale of o as clients see it: its managedFields say who
// owns spec.replicas of o, in autoscaling/v1 terms.
func scaleWithManagedFields(o *operator.NginxOperator) (*autoscalingv1.Scale, error) {
	scale := scaleFromNginxOperator(o)
	managed, err := managedfields.NewScaleHandler(o.ManagedFields, storageVersion, replicasPathByVersion).ToSubresource()
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("reading the managed fields of NginxOperator %q: %w", o.Name, err))
	}
	scale.ManagedFields = managed
	return scale, nil
}

// requestVersion is the version of NginxOperator the request was made through; the
// scaler's ownership of spec.replicas is recorded in that version, as for built-in
// workloads.
func requestVersion(ctx context.Context) schema.GroupVersion {
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
		if _, served := replicasPathByVersion[gv.String()]; served {
			return gv
		}
	}
	return storageVersion
}

// scaleUpdatedObjectInfo turns the Scale a client sent into an updated NginxOperator.
type scaleUpdatedObjectInfo struct {
	name       string
	reqObjInfo rest.UpdatedObjectInfo
}

func (i *scaleUpdatedObjectInfo) Preconditions() *metav1.Preconditions {
	return i.reqObjInfo.Preconditions()
}

func (i *scaleUpdatedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	o, ok := oldObj.DeepCopyObject().(*operator.NginxOperator)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected an NginxOperator, got %T", oldObj))
	}
	// The field manager of /scale works on the Scale: hand it the owners of
	// spec.replicas as Scale managed fields and map its result back below.
	managedFieldsHandler := managedfields.NewScaleHandler(o.ManagedFields, requestVersion(ctx), replicasPathByVersion)
	scaleManagedFields, err := managedFieldsHandler.ToSubresource()
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("reading the managed fields of NginxOperator %q: %w", o.Name, err))
	}
	oldScale := scaleFromNginxOperator(o)
	oldScale.ManagedFields = scaleManagedFields
	if len(scaleManagedFields) == 0 && len(o.ManagedFields) > 0 {
		// Nobody owns spec.replicas yet (it was defaulted), so the Scale would carry no
		// managed fields, and the field manager skips tracking an update of an object
		// without any: the first scaler, typically an HPA, would not own what it wrote.
		// The NginxOperator is tracked, so its Scale is too; ToParent drops this entry.
		oldScale.ManagedFields = []metav1.ManagedFieldsEntry{untrackedReplicas}
	}
	newScaleObj, err := i.reqObjInfo.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	if newScaleObj == nil {
		return nil, apierrors.NewBadRequest("nil update passed to Scale")
	}
	scale, ok := newScaleObj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected an autoscaling/v1 Scale, got %T", newScaleObj))
	}
	if errs := validateScale(scale, o); len(errs) > 0 {
		return nil, apierrors.NewInvalid(scaleKind.GroupKind(), scale.Name, errs)
	}
	// A resourceVersion in the Scale is a precondition on the NginxOperator.
	o.ResourceVersion = scale.ResourceVersion
	// In QPS mode spec.replicas stays unset (validateScale allowed only the current
	// count), so nobody gains or loses ownership of it.
	if o.Spec.QPS != nil {
		return o, nil
	}
	o.Spec.Replicas = &scale.Spec.Replicas
	if o.ManagedFields, err = managedFieldsHandler.ToParent(scale.ManagedFields); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("recording the managed fields of the Scale of NginxOperator %q: %w", o.Name, err))
	}
	return o, nil
}

// untrackedReplicas is a Scale managed fields entry that owns nothing; see UpdatedObject.
var untrackedReplicas = metav1.ManagedFieldsEntry{
	Manager: "nginx-operator-apiserver", Operation: metav1.ManagedFieldsOperationUpdate,
	APIVersion: autoscalingv1.SchemeGroupVersion.String(), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1("{}"),
}

func validateScale(scale *autoscalingv1.Scale, o *operator.NginxOperator) field.ErrorList {
	replicasPath := field.NewPath("spec", "replicas")
	allErrs := apimachineryvalidation.ValidateNonnegativeField(int64(scale.Spec.Replicas), replicasPath)
	if scale.Name != "" && scale.Name != o.Name {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), scale.Name, "must match the name of the NginxOperator"))
	}
	if o.Spec.QPS != nil && scale.Spec.Replicas != o.Spec.DesiredReplicas() {
		allErrs = append(allErrs, field.Forbidden(replicasPath, fmt.Sprintf(
			"NginxOperator %q is in QPS mode: its replicas follow ceil(spec.qps.totalQPS / spec.qps.singlePodQPS) = %d; change spec.qps, or remove it and set spec.replicas",
			o.Name, o.Spec.DesiredReplicas())))
	}
	return allErrs
}
