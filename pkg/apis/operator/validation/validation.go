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
// Package validation checks NginxOperators on create, update and status update and
// reports every problem with its field path.
package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// ValidateNginxOperatorName requires a DNS-1035 label, because the name becomes the
// name of the Deployment and the Service.
var ValidateNginxOperatorName = apimachineryvalidation.NameIsDNS1035Label

// ValidateNginxOperator validates a new object.
func ValidateNginxOperator(obj *operator.NginxOperator) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, true, ValidateNginxOperatorName, field.NewPath("metadata"))
	return append(allErrs, validateContent(obj, nil)...)
}

// ValidateNginxOperatorUpdate validates an update of the main resource.
// ValidateObjectMetaUpdate covers the metadata checks of create as well.
func ValidateNginxOperatorUpdate(obj, old *operator.NginxOperator) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&obj.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateContent(obj, old)...)
}

// validateContent checks what create and update share beyond generic metadata; old is
// nil on create. The bounds (ValidateSpecBounds) and the rules that protect other
// tenants (validateNeighbours) came after objects were stored: on update they ratchet,
// refusing only what the update makes worse. While a list is over its bound only the
// bounds are reported, not one error per item of an absurd list.
func validateContent(obj, old *operator.NginxOperator) field.ErrorList {
	allErrs := validateNoPreservedFields(obj)
	specPath := field.NewPath("spec")
	boundErrs := ValidateSpecBounds(&obj.Spec, specPath)
	neighbourErrs := validateNeighbours(&obj.Spec, obj.Namespace, specPath)
	if old != nil {
		boundErrs = ratchet(boundErrs, ValidateSpecBounds(&old.Spec, specPath))
		neighbourErrs = ratchet(neighbourErrs, validateNeighbours(&old.Spec, old.Namespace, specPath))
	}
	if len(boundErrs) > 0 {
		return append(allErrs, boundErrs...)
	}
	allErrs = append(allErrs, neighbourErrs...)
	return append(allErrs, ValidateNginxOperatorSpec(&obj.Spec, specPath)...)
}

// validateNoPreservedFields refuses v1alpha1's preserved-fields annotation on an
// internal object: conversion consumes a value it can read, so one left here is a value
// a v1alpha1 client sent that the server did not write.
func validateNoPreservedFields(obj *operator.NginxOperator) field.ErrorList {
	if _, found := obj.Annotations[operator.PreservedFieldsAnnotation]; !found {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "annotations").Key(operator.PreservedFieldsAnnotation),
		"reserved for the v1alpha1 representation: through v1alpha1 send back the value the server wrote, unchanged; through v1alpha2 set the fields instead")}
}

// ValidateNginxOperatorStatusUpdate validates an update of the status subresource.
func ValidateNginxOperatorStatusUpdate(obj, old *operator.NginxOperator) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&obj.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	// Through v1alpha1 the annotation carries v1alpha2-only status fields too.
	allErrs = append(allErrs, validateNoPreservedFields(obj)...)
	return append(allErrs, ValidateNginxOperatorStatus(&obj.Status, field.NewPath("status"))...)
}

// ValidateNginxOperatorStatus checks counters, the selector and the conditions.
func ValidateNginxOperatorStatus(status *operator.NginxOperatorStatus, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateNonnegativeField(status.ObservedGeneration, fldPath.Child("observedGeneration"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.Replicas), fldPath.Child("replicas"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.ReadyReplicas), fldPath.Child("readyReplicas"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(status.AvailableReplicas), fldPath.Child("availableReplicas"))...)
	// Relations between counters only make sense once each counter is valid.
	if len(allErrs) == 0 {
		allErrs = append(allErrs, validateCounterOrder(status, fldPath)...)
	}
	if status.Selector != "" {
		if _, err := labels.Parse(status.Selector); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), status.Selector, err.Error()))
		}
	}
	if status.RealQPS != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(*status.RealQPS, fldPath.Child("realQPS"))...)
	}
	if len(status.ConfigMapDigests) > MaxConfigMapDigests {
		allErrs = append(allErrs, field.TooMany(fldPath.Child("configMapDigests"), len(status.ConfigMapDigests), MaxConfigMapDigests))
	}
	if c := status.Canary; c != nil {
		p := fldPath.Child("canary")
		if len(c.Pods) > MaxCanaryPods {
			allErrs = append(allErrs, field.TooMany(p.Child("pods"), len(c.Pods), MaxCanaryPods))
		}
		if len(c.Message) > MaxCanaryMessage {
			allErrs = append(allErrs, field.TooLong(p.Child("message"), "", MaxCanaryMessage))
		}
		switch c.Phase {
		case operator.CanaryAnalyzing, operator.CanaryPromoted, operator.CanaryFailed:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("phase"), c.Phase,
				[]operator.CanaryPhase{operator.CanaryAnalyzing, operator.CanaryPromoted, operator.CanaryFailed}))
		}
	}
	if len(status.Conditions) > MaxConditions {
		return append(allErrs, field.TooMany(fldPath.Child("conditions"), len(status.Conditions), MaxConditions))
	}
	return append(allErrs, metav1validation.ValidateConditions(status.Conditions, fldPath.Child("conditions"))...)
}

func validateCounterOrder(status *operator.NginxOperatorStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if status.ReadyReplicas > status.Replicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("readyReplicas"), status.ReadyReplicas, "must not exceed status.replicas"))
	}
	if status.AvailableReplicas > status.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("availableReplicas"), status.AvailableReplicas, "must not exceed status.readyReplicas"))
	}
	return allErrs
}
