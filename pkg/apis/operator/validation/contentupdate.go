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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

var contentUpdatePolicies = []string{operand.ContentUpdateReload, operand.ContentUpdateRollout}

// validateContentUpdate refuses Reload for pods that cannot reload: the sidecar that
// signals nginx is the metrics exporter, and it must run as nginx's user, which the spec
// must name unless the image is the default one, and which may not be root (the sidecar
// runs as non-root).
func validateContentUpdate(spec *operator.NginxOperatorSpec, fldPath *field.Path) field.ErrorList {
	p := fldPath.Child("contentUpdate")
	switch string(spec.ContentUpdate) {
	case "", operand.ContentUpdateRollout: // "": reload where the pods can, decided by the controller
		return nil
	case operand.ContentUpdateReload:
	default:
		return field.ErrorList{field.NotSupported(p, spec.ContentUpdate, contentUpdatePolicies)}
	}
	var allErrs field.ErrorList
	if spec.Metrics == nil || spec.Metrics.Enabled == nil || !*spec.Metrics.Enabled {
		allErrs = append(allErrs, field.Invalid(p, spec.ContentUpdate,
			"needs the nginx-exporter sidecar, which "+fldPath.Child("metrics", "enabled").String()+" runs; set it to true or use Rollout"))
	}
	var container, pod *int64
	if spec.SecurityContext != nil {
		container = spec.SecurityContext.RunAsUser
	}
	if spec.Pod != nil && spec.Pod.SecurityContext != nil {
		pod = spec.Pod.SecurityContext.RunAsUser
	}
	switch user, known := operand.NginxUser(container, pod, spec.Image); {
	case !known:
		allErrs = append(allErrs, field.Invalid(p, spec.ContentUpdate,
			"needs the user nginx runs as, for the sidecar that signals it: set "+fldPath.Child("securityContext", "runAsUser").String()+" to the image's user, or use Rollout"))
	case user == 0:
		allErrs = append(allErrs, field.Invalid(p, spec.ContentUpdate,
			"cannot signal nginx running as root (the sidecar runs as nginx's user and never as root); run nginx as another user or use Rollout"))
	}
	// The directories Reload mounts in the nginx container stay the controller's.
	for _, dir := range []string{reload.ConfigDirectory, reload.ErrorLogDirectory} {
		for i, f := range spec.Files {
			if overlaps(f.MountPath, dir) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("files").Index(i).Child("mountPath"), f.MountPath, "overlaps "+dir+", which Reload mounts"))
			}
		}
		for i, s := range spec.Scratch {
			if overlaps(s.MountPath, dir) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("scratch").Index(i).Child("mountPath"), s.MountPath, "overlaps "+dir+", which Reload mounts"))
			}
		}
	}
	return allErrs
}
