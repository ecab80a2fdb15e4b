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

package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateEnv(env []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, ev := range env {
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		if ev.Name == "" {
			allErrs = append(allErrs, field.Required(namePath, ""))
		} else {
			for _, msg := range validation.IsEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(namePath, ev.Name, msg))
			}
			if names.Has(ev.Name) {
				allErrs = append(allErrs, field.Duplicate(namePath, ev.Name))
			}
			names.Insert(ev.Name)
		}
		if ev.ValueFrom != nil {
			allErrs = append(allErrs, validateEnvVarSource(ev.ValueFrom, ev.Value != "", idxPath.Child("valueFrom"))...)
		}
	}
	return allErrs
}

// validateEnvVarSource requires exactly one source, as the pod API does.
func validateEnvVarSource(src *corev1.EnvVarSource, hasValue bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if hasValue {
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when value is not empty"))
	}
	sources := 0
	for _, set := range []bool{src.FieldRef != nil, src.ResourceFieldRef != nil, src.ConfigMapKeyRef != nil, src.SecretKeyRef != nil, src.FileKeyRef != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		allErrs = append(allErrs, field.Invalid(fldPath, sources, "must specify exactly one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef or fileKeyRef"))
	}
	if r := src.ConfigMapKeyRef; r != nil {
		allErrs = append(allErrs, validateKeyRef(r.Name, r.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if r := src.SecretKeyRef; r != nil {
		allErrs = append(allErrs, validateKeyRef(r.Name, r.Key, fldPath.Child("secretKeyRef"))...)
	}
	if src.FieldRef != nil && src.FieldRef.FieldPath == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("fieldRef", "fieldPath"), ""))
	}
	if src.ResourceFieldRef != nil && !envResources.Has(src.ResourceFieldRef.Resource) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("resourceFieldRef", "resource"), src.ResourceFieldRef.Resource, sets.List(envResources)))
	}
	// fileKeyRef needs a pod volume, which an NginxOperator cannot declare, and an alpha
	// feature gate; kube-apiserver would reject the Deployment.
	if src.FileKeyRef != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("fileKeyRef"), "not supported: NginxOperators declare no volumes"))
	}
	return allErrs
}

// envResources are the container resources the downward API exposes.
var envResources = sets.New("limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage")

// isContainerResourceName accepts what kube-apiserver accepts for container resources:
// the standard names, hugepages, and extended resources with a domain prefix.
func isContainerResourceName(name corev1.ResourceName) bool {
	switch {
	case name == corev1.ResourceCPU, name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage:
		return true
	case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		return true
	case strings.Contains(string(name), "/") && !strings.Contains(string(name), "kubernetes.io/"):
		return len(validation.IsQualifiedName(string(name))) == 0
	}
	return false
}

func validateKeyRef(name, key string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	if key == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	}
	return allErrs
}

// validateResources requires valid names, non-negative quantities and requests within limits.
func validateResources(res *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, list := range []struct {
		values corev1.ResourceList
		path   *field.Path
	}{{res.Limits, fldPath.Child("limits")}, {res.Requests, fldPath.Child("requests")}} {
		for name, q := range list.values {
			keyPath := list.path.Key(string(name))
			if !isContainerResourceName(name) {
				allErrs = append(allErrs, field.Invalid(keyPath, name, "must be cpu, memory, ephemeral-storage, hugepages-<size> or a domain-prefixed extended resource"))
			}
			if q.Sign() < 0 {
				allErrs = append(allErrs, field.Invalid(keyPath, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for name, request := range res.Requests {
		limit, found := res.Limits[name]
		if found && request.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("requests").Key(string(name)), request.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	if len(res.Claims) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("claims"), "resource claims are not supported"))
	}
	return allErrs
}
