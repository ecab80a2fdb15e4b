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
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// Limits of what the controller mounts into the nginx pods.
const (
	// MaxInlineConfigBytes bounds spec.config.inline: every read of the object carries
	// it, and it must leave room under the object's own limit (256 KiB, enforced by the
	// registry). A larger nginx.conf belongs in a ConfigMap (configMapKeyRef, 1 MiB).
	// Checked by ValidateSpecBounds.
	MaxInlineConfigBytes = 128 * 1024
	// MaxMounts bounds spec.files and spec.tls each.
	MaxMounts = 20
	// maxHealthcheckPathLength keeps the probe's URL reasonable.
	maxHealthcheckPathLength = 1024
)

// validateConfig requires exactly one source of nginx.conf.
func validateConfig(cfg *operator.ConfigSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case cfg.Inline == "" && cfg.ConfigMapKeyRef == nil:
		allErrs = append(allErrs, field.Required(fldPath, "set inline or configMapKeyRef"))
	case cfg.Inline != "" && cfg.ConfigMapKeyRef != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("configMapKeyRef"), "may not be set together with inline"))
	}
	if ref := cfg.ConfigMapKeyRef; ref != nil {
		allErrs = append(allErrs, validateKeyRef(ref.Name, ref.Key, fldPath.Child("configMapKeyRef"))...)
	}
	return allErrs
}

// validateFiles checks the ConfigMaps mounted as directories: valid names, absolute
// and distinct mount paths that clash with nothing the controller mounts itself.
func validateFiles(files []operator.ConfigMapFiles, fldPath *field.Path) field.ErrorList {
	if len(files) > MaxMounts {
		return field.ErrorList{field.TooMany(fldPath, len(files), MaxMounts)}
	}
	var allErrs field.ErrorList
	paths := sets.New[string]()
	for i, f := range files {
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateObjectName(f.ConfigMapName, idxPath.Child("configMapName"))...)
		mountPath := idxPath.Child("mountPath")
		switch {
		case f.MountPath == "":
			allErrs = append(allErrs, field.Required(mountPath, "an absolute directory"))
		case !path.IsAbs(f.MountPath) || path.Clean(f.MountPath) != f.MountPath:
			allErrs = append(allErrs, field.Invalid(mountPath, f.MountPath, "must be an absolute, clean path (no .., no trailing /)"))
		case f.MountPath == "/":
			allErrs = append(allErrs, field.Invalid(mountPath, f.MountPath, "must not be the root directory"))
		case strings.ContainsAny(f.MountPath, ":\x00"):
			allErrs = append(allErrs, field.Invalid(mountPath, f.MountPath, "must not contain ':'"))
		case f.MountPath == operand.ConfigPath:
			allErrs = append(allErrs, field.Invalid(mountPath, f.MountPath, "is where spec.config goes"))
		case f.MountPath == operand.TLSDirectory || strings.HasPrefix(f.MountPath, operand.TLSDirectory+"/"):
			allErrs = append(allErrs, field.Invalid(mountPath, f.MountPath, "is where spec.tls goes"))
		case paths.Has(f.MountPath):
			allErrs = append(allErrs, field.Duplicate(mountPath, f.MountPath))
		}
		paths.Insert(f.MountPath)
	}
	return allErrs
}

// validateTLS checks the Secret names; each becomes a directory under TLSDirectory.
func validateTLS(secrets []operator.TLSSecret, fldPath *field.Path) field.ErrorList {
	if len(secrets) > MaxMounts {
		return field.ErrorList{field.TooMany(fldPath, len(secrets), MaxMounts)}
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, s := range secrets {
		namePath := fldPath.Index(i).Child("secretName")
		allErrs = append(allErrs, validateObjectName(s.SecretName, namePath)...)
		if names.Has(s.SecretName) {
			allErrs = append(allErrs, field.Duplicate(namePath, s.SecretName))
		}
		names.Insert(s.SecretName)
	}
	return allErrs
}

// validateHealthcheckPath accepts an absolute URL path the kubelet can request, on a
// TCP port.
func validateHealthcheckPath(p string, ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case !strings.HasPrefix(p, "/"):
		allErrs = append(allErrs, field.Invalid(fldPath, p, "must start with /"))
	case len(p) > maxHealthcheckPathLength:
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxHealthcheckPathLength))
	case strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		allErrs = append(allErrs, field.Invalid(fldPath, p, "must not contain spaces or control characters"))
	}
	hasTCP := false
	for _, port := range ports {
		hasTCP = hasTCP || port.Protocol == corev1.ProtocolTCP || port.Protocol == ""
	}
	if !hasTCP {
		allErrs = append(allErrs, field.Forbidden(fldPath, "needs a TCP port in spec.ports to probe"))
	}
	return allErrs
}

// validatePodDisruptionBudget requires exactly one of the two bounds, each a
// non-negative number or a percentage up to 100%.
func validatePodDisruptionBudget(pdb *operator.PodDisruptionBudgetSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case pdb.MinAvailable == nil && pdb.MaxUnavailable == nil:
		allErrs = append(allErrs, field.Required(fldPath, "set minAvailable or maxUnavailable"))
	case pdb.MinAvailable != nil && pdb.MaxUnavailable != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("maxUnavailable"), "may not be set together with minAvailable"))
	}
	if pdb.MinAvailable != nil {
		allErrs = append(allErrs, validateIntOrPercent(*pdb.MinAvailable, fldPath.Child("minAvailable"))...)
	}
	if pdb.MaxUnavailable != nil {
		allErrs = append(allErrs, validateIntOrPercent(*pdb.MaxUnavailable, fldPath.Child("maxUnavailable"))...)
	}
	return allErrs
}

func validateIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if v.Type == intstr.Int {
		return apimachineryvalidation.ValidateNonnegativeField(int64(v.IntVal), fldPath)
	}
	value, isPercent := strings.CutSuffix(v.StrVal, "%")
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, false)
	if !isPercent || err != nil || value == "" || n < 0 || n > 100 {
		return field.ErrorList{field.Invalid(fldPath, v.StrVal, "must be a non-negative integer or a percentage between 0% and 100%")}
	}
	return nil
}

// validateObjectName checks the name of a ConfigMap, Secret or other namespaced object.
func validateObjectName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}
