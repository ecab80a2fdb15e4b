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

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// validateMetrics keeps what the exporter sidecar and nginx's status server need free
// while spec.metrics.enabled is true: the exporter's port name and number, and the
// directory the status server's configuration is mounted in. (Defaulting switches
// metrics off for a spec whose ports already take them, so this refuses only an explicit
// enabled: true.)
func validateMetrics(spec *operator.NginxOperatorSpec, fldPath *field.Path) field.ErrorList {
	if spec.Metrics == nil || spec.Metrics.Enabled == nil || !*spec.Metrics.Enabled {
		return nil
	}
	var allErrs field.ErrorList
	why := fmt.Sprintf("is the metrics exporter's while %s is true; set it to false to run an exporter of your own", fldPath.Child("metrics", "enabled"))
	for i, p := range spec.Ports {
		if p.Name == operand.MetricsPortName {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("ports").Index(i).Child("name"), p.Name, why))
		}
		if p.ContainerPort == operand.MetricsPort {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("ports").Index(i).Child("containerPort"), p.ContainerPort, why))
		}
	}
	for i, f := range spec.Files {
		if f.MountPath == operand.StatusConfigDirectory || strings.HasPrefix(f.MountPath, operand.StatusConfigDirectory+"/") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("files").Index(i).Child("mountPath"), f.MountPath,
				"is where the controller mounts nginx's status server while "+fldPath.Child("metrics", "enabled").String()+" is true"))
		}
	}
	return allErrs
}
