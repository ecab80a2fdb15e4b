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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateResources mirrors kube-apiserver's checks of container resources
// (validateResourceRequirements in k8s.io/kubernetes pkg/apis/core/validation), since
// spec.resources is copied into the Deployment: valid names, non-negative quantities,
// requests within limits, and for resources that cannot be overcommitted (extended
// resources and hugepages) requests equal to limits.
func validateResources(res *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	limitsPath, requestsPath := fldPath.Child("limits"), fldPath.Child("requests")
	for name, q := range res.Limits {
		allErrs = append(allErrs, validateResourceQuantity(name, q, limitsPath.Key(string(name)))...)
	}
	for name, request := range res.Requests {
		keyPath := requestsPath.Key(string(name))
		allErrs = append(allErrs, validateResourceQuantity(name, request, keyPath)...)
		limit, found := res.Limits[name]
		switch {
		case !found && !overcommitAllowed(name):
			allErrs = append(allErrs, field.Required(limitsPath.Key(string(name)), "must be set, and equal to the request, for a resource that cannot be overcommitted"))
		case found && !overcommitAllowed(name) && request.Cmp(limit) != 0:
			allErrs = append(allErrs, field.Invalid(keyPath, request.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case found && request.Cmp(limit) > 0:
			allErrs = append(allErrs, field.Invalid(keyPath, request.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	if hasHugePages(res) && !hasCPUOrMemory(res) {
		allErrs = append(allErrs, field.Forbidden(fldPath, "hugepages require a cpu or memory request or limit"))
	}
	if len(res.Claims) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("claims"), "resource claims are not supported"))
	}
	return allErrs
}

func validateResourceQuantity(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if !isContainerResourceName(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "must be cpu, memory, ephemeral-storage, hugepages-<size> or a domain-prefixed extended resource")}
	}
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be greater than or equal to 0")}
	}
	if isExtendedResourceName(name) && q.MilliValue()%1000 != 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be an integer")}
	}
	if isHugePages(name) {
		pageSize := hugePageSize(name)
		if pageSize.MilliValue()%1000 != 0 || q.Value()%pageSize.Value() != 0 {
			return field.ErrorList{field.Invalid(fldPath, q.String(), fmt.Sprintf("must be a multiple of the page size %s", pageSize.String()))}
		}
	}
	return nil
}

// isContainerResourceName accepts what kube-apiserver accepts for container resources:
// the standard names, hugepages of a valid size, and extended resources with a domain
// prefix outside kubernetes.io.
func isContainerResourceName(name corev1.ResourceName) bool {
	switch {
	case name == corev1.ResourceCPU, name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage:
		return true
	case isHugePages(name):
		size := hugePageSize(name)
		return size.Sign() > 0
	}
	return isExtendedResourceName(name)
}

// isExtendedResourceName is true for a domain-prefixed name outside kubernetes.io that
// stays a qualified name as a quota key ("requests.<name>").
func isExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}

func overcommitAllowed(name corev1.ResourceName) bool {
	return !isExtendedResourceName(name) && !isHugePages(name)
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// hugePageSize is the page size a hugepages-<size> name declares; zero when invalid.
func hugePageSize(name corev1.ResourceName) resource.Quantity {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
	if err != nil || size.Sign() <= 0 {
		return resource.Quantity{}
	}
	return size
}

func hasHugePages(res *corev1.ResourceRequirements) bool {
	for _, list := range []corev1.ResourceList{res.Limits, res.Requests} {
		for name := range list {
			if isHugePages(name) {
				return true
			}
		}
	}
	return false
}

func hasCPUOrMemory(res *corev1.ResourceRequirements) bool {
	for _, list := range []corev1.ResourceList{res.Limits, res.Requests} {
		for name := range list {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
				return true
			}
		}
	}
	return false
}
