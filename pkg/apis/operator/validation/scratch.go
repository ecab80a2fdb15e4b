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
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// Limits of spec.scratch.
const (
	// MaxScratch bounds spec.scratch: a cache and a few temp directories.
	MaxScratch = 4
	// MaxScratchNameLength leaves room for the "scratch-" prefix of the pod's volume
	// name, a DNS label of at most 63 characters.
	MaxScratchNameLength = validation.DNS1123LabelMaxLength - len(operand.ScratchVolumePrefix)
)

var (
	// MaxScratchDiskSize bounds the sizeLimit of a scratch volume on the node's disk.
	MaxScratchDiskSize = resource.MustParse("64Gi")
	// MaxScratchMemorySize bounds the sizeLimit of a tmpfs (medium Memory).
	MaxScratchMemorySize = resource.MustParse("16Gi")

	supportedScratchMedia = sets.New(corev1.StorageMediumDefault, corev1.StorageMediumMemory)
)

// configDirectory is nginx's configuration directory: nginx.conf, the TLS Secrets and
// what the image keeps there (mime.types, conf.d). A scratch volume replaces what the
// image has at its path, so it may neither be there nor hide it.
var configDirectory = path.Dir(operand.ConfigPath)

// validateScratch checks the emptyDir volumes: unique DNS-label names, absolute mount
// paths that overlap nothing else mounted (nginx's configuration directory, spec.files,
// one another), a supported medium and a positive size limit in whole bytes within the
// medium's maximum.
func validateScratch(scratch []operator.ScratchVolume, files []operator.ConfigMapFiles, fldPath *field.Path) field.ErrorList {
	if len(scratch) > MaxScratch {
		return field.ErrorList{field.TooMany(fldPath, len(scratch), MaxScratch)}
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, v := range scratch {
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		switch {
		case v.Name == "":
			allErrs = append(allErrs, field.Required(namePath, "a DNS label"))
		case len(v.Name) > MaxScratchNameLength:
			allErrs = append(allErrs, field.TooLong(namePath, "", MaxScratchNameLength))
		default:
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				allErrs = append(allErrs, field.Invalid(namePath, v.Name, msg))
			}
			if names.Has(v.Name) {
				allErrs = append(allErrs, field.Duplicate(namePath, v.Name))
			}
			names.Insert(v.Name)
		}
		allErrs = append(allErrs, validateScratchMountPath(v.MountPath, scratch[:i], files, idxPath.Child("mountPath"))...)
		if !supportedScratchMedia.Has(v.Medium) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("medium"), v.Medium, []string{string(corev1.StorageMediumDefault), string(corev1.StorageMediumMemory)}))
		}
		allErrs = append(allErrs, validateScratchSize(v.SizeLimit, v.Medium, idxPath.Child("sizeLimit"))...)
	}
	return allErrs
}

func validateScratchMountPath(p string, before []operator.ScratchVolume, files []operator.ConfigMapFiles, fldPath *field.Path) field.ErrorList {
	switch {
	case p == "":
		return field.ErrorList{field.Required(fldPath, "an absolute directory")}
	case !path.IsAbs(p) || path.Clean(p) != p:
		return field.ErrorList{field.Invalid(fldPath, p, "must be an absolute, clean path (no .., no trailing /)")}
	case p == "/":
		return field.ErrorList{field.Invalid(fldPath, p, "must not be the root directory")}
	case strings.ContainsAny(p, ":\x00"):
		return field.ErrorList{field.Invalid(fldPath, p, "must not contain ':'")}
	case overlaps(p, configDirectory):
		return field.ErrorList{field.Invalid(fldPath, p, fmt.Sprintf("must not be in or contain %s, nginx's configuration directory (spec.config, spec.tls and the image's files)", configDirectory))}
	}
	for j, f := range files {
		if overlaps(p, f.MountPath) {
			return field.ErrorList{field.Invalid(fldPath, p, fmt.Sprintf("overlaps spec.files[%d].mountPath %s", j, f.MountPath))}
		}
	}
	for j, v := range before {
		switch {
		case p == v.MountPath:
			return field.ErrorList{field.Duplicate(fldPath, p)}
		case overlaps(p, v.MountPath):
			return field.ErrorList{field.Invalid(fldPath, p, fmt.Sprintf("overlaps spec.scratch[%d].mountPath %s", j, v.MountPath))}
		}
	}
	return nil
}

func validateScratchSize(q resource.Quantity, medium corev1.StorageMedium, fldPath *field.Path) field.ErrorList {
	maxSize := MaxScratchDiskSize
	if medium == corev1.StorageMediumMemory {
		maxSize = MaxScratchMemorySize
	}
	switch {
	case q.IsZero():
		return field.ErrorList{field.Required(fldPath, "a scratch volume without a size limit could fill the node's disk or the pod's memory")}
	case q.Sign() < 0:
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be greater than 0")}
	case q.Cmp(maxSize) > 0:
		return field.ErrorList{field.Invalid(fldPath, q.String(), fmt.Sprintf("must be at most %s", maxSize.String()))}
	case q.MilliValue()%1000 != 0:
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be a whole number of bytes")}
	}
	return nil
}

// overlaps is true when a and b, clean absolute paths, are the same directory or one
// lies within the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, "/")+"/") || strings.HasPrefix(b, strings.TrimSuffix(a, "/")+"/")
}
