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
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// The rules below mirror what kube-apiserver checks for a container's env
// (ValidateEnv in k8s.io/kubernetes pkg/apis/core/validation): spec.env is copied into
// the Deployment, so whatever kube-apiserver would refuse there is refused here, on
// the field the user wrote.

// envFieldPaths are the pod fields an env var may reference without a subscript.
var envFieldPaths = sets.New(
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"spec.nodeName",
	"spec.serviceAccountName",
	"status.hostIP",
	"status.hostIPs",
	"status.podIP",
	"status.podIPs",
)

// envResources are the container resources an env var may reference; hugepages are
// referenced by prefix.
var envResources = sets.New(
	"limits.cpu",
	"limits.memory",
	"limits.ephemeral-storage",
	"requests.cpu",
	"requests.memory",
	"requests.ephemeral-storage",
)

var envHugePagesPrefixes = []string{"limits.hugepages-", "requests.hugepages-"}

// Divisors kube-apiserver accepts, by the kind of resource referenced.
var (
	cpuDivisors  = sets.New("1m", "1")
	byteDivisors = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
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

// validateEnvVarSource requires exactly one valid source.
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
	if src.FieldRef != nil {
		allErrs = append(allErrs, validateFieldRef(src.FieldRef, fldPath.Child("fieldRef"))...)
	}
	if src.ResourceFieldRef != nil {
		allErrs = append(allErrs, validateResourceFieldRef(src.ResourceFieldRef, fldPath.Child("resourceFieldRef"))...)
	}
	if r := src.ConfigMapKeyRef; r != nil {
		allErrs = append(allErrs, validateKeyRef(r.Name, r.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if r := src.SecretKeyRef; r != nil {
		allErrs = append(allErrs, validateKeyRef(r.Name, r.Key, fldPath.Child("secretKeyRef"))...)
	}
	// fileKeyRef needs a pod volume, which an NginxOperator cannot declare, and an alpha
	// feature gate; kube-apiserver would reject the Deployment.
	if src.FileKeyRef != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("fileKeyRef"), "not supported: NginxOperators declare no volumes"))
	}
	return allErrs
}

// validateFieldRef accepts the downward-API fields of a pod that an env var may read.
func validateFieldRef(ref *corev1.ObjectFieldSelector, fldPath *field.Path) field.ErrorList {
	// kube-apiserver defaults an empty apiVersion to v1, the only version it converts.
	if ref.APIVersion != "" && ref.APIVersion != "v1" {
		return field.ErrorList{field.NotSupported(fldPath.Child("apiVersion"), ref.APIVersion, []string{"v1"})}
	}
	pathPath := fldPath.Child("fieldPath")
	if ref.FieldPath == "" {
		return field.ErrorList{field.Required(pathPath, "")}
	}
	if name, key, ok := splitSubscript(ref.FieldPath); ok {
		var msgs []string
		switch name {
		case "metadata.labels":
			msgs = validation.IsQualifiedName(key)
		case "metadata.annotations":
			msgs = validation.IsQualifiedName(strings.ToLower(key))
		default:
			msgs = []string{"only metadata.labels and metadata.annotations take a ['key'] subscript"}
		}
		var allErrs field.ErrorList
		for _, msg := range msgs {
			allErrs = append(allErrs, field.Invalid(pathPath, ref.FieldPath, msg))
		}
		return allErrs
	}
	// spec.host is the old name of spec.nodeName; kube-apiserver still converts it.
	if ref.FieldPath != "spec.host" && !envFieldPaths.Has(ref.FieldPath) {
		return field.ErrorList{field.NotSupported(pathPath, ref.FieldPath,
			append(sets.List(envFieldPaths), "metadata.annotations['<key>']", "metadata.labels['<key>']"))}
	}
	return nil
}

// splitSubscript splits "metadata.labels['app']" into "metadata.labels" and "app".
func splitSubscript(fieldPath string) (name, key string, ok bool) {
	trimmed, found := strings.CutSuffix(fieldPath, "']")
	if !found {
		return "", "", false
	}
	name, key, found = strings.Cut(trimmed, "['")
	if !found || name == "" {
		return "", "", false
	}
	return name, key, true
}

// validateResourceFieldRef accepts the nginx container's own resources with a divisor
// that suits them.
func validateResourceFieldRef(ref *corev1.ResourceFieldSelector, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// kube-apiserver accepts any name here, but the kubelet fails to start a pod whose
	// env names a container the pod does not have.
	if ref.ContainerName != "" && ref.ContainerName != operand.ContainerName {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("containerName"), ref.ContainerName,
			fmt.Sprintf("must be empty or %q, the only container of the pod", operand.ContainerName)))
	}
	resourcePath := fldPath.Child("resource")
	switch {
	case ref.Resource == "":
		return append(allErrs, field.Required(resourcePath, ""))
	case !envResources.Has(ref.Resource) && !isEnvHugePages(ref.Resource):
		return append(allErrs, field.NotSupported(resourcePath, ref.Resource,
			append(sets.List(envResources), "limits.hugepages-<size>", "requests.hugepages-<size>")))
	case ref.Divisor.IsZero():
		return allErrs
	}
	divisors := byteDivisors
	if strings.HasSuffix(ref.Resource, ".cpu") {
		divisors = cpuDivisors
	}
	if divisor := ref.Divisor.String(); !divisors.Has(divisor) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("divisor"), divisor, sets.List(divisors)))
	}
	return allErrs
}

func isEnvHugePages(resource string) bool {
	for _, prefix := range envHugePagesPrefixes {
		if strings.HasPrefix(resource, prefix) {
			return true
		}
	}
	return false
}

// validateKeyRef checks the ConfigMap or Secret name and the key within it.
func validateKeyRef(name, key string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
		}
	}
	if key == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
		}
	}
	return allErrs
}
