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

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

var scaleKind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// ScaleREST serves the scale subresource as autoscaling/v1 Scale, backed by
// spec.replicas, status.replicas and status.selector. In QPS mode the replica count
// follows spec.qps, so writes are refused with 422 rather than silently dropping qps.
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
	return scaleFromNginxOperator(obj.(*operator.NginxOperator)), nil
}

// Update sets spec.replicas from a Scale.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, &scaleUpdatedObjectInfo{name: name, reqObjInfo: objInfo},
		toScaleCreateValidation(createValidation), toScaleUpdateValidation(updateValidation), false, options)
	if err != nil {
		return nil, false, err
	}
	return scaleFromNginxOperator(obj.(*operator.NginxOperator)), false, nil
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
		Spec:   autoscalingv1.ScaleSpec{Replicas: o.Spec.DesiredReplicas()},
		Status: autoscalingv1.ScaleStatus{Replicas: o.Status.Replicas, Selector: o.Status.Selector},
	}
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
	oldScale := scaleFromNginxOperator(o)
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
	if o.Spec.QPS == nil {
		o.Spec.Replicas = &scale.Spec.Replicas
	}
	// A resourceVersion in the Scale is a precondition on the NginxOperator.
	o.ResourceVersion = scale.ResourceVersion
	return o, nil
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
