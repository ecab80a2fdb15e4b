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

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// validateCanary checks spec.canary's bounds; a number of pods of 0 or 0% would stage
// on no pod, which is what enabled: false says.
func validateCanary(c *operator.CanarySpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if c.Pods != nil {
		p := fldPath.Child("pods")
		if errs := validateIntOrPercent(*c.Pods, p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else if n, _ := intstr.GetScaledValueFromIntOrPercent(c.Pods, 100, true); n == 0 || (c.Pods.Type == intstr.String && n >= 100) {
			allErrs = append(allErrs, field.Invalid(p, c.Pods.String(), "must be at least 1 (or 1%) and under 100%: to load a configuration on every pod at once, set enabled: false"))
		}
	}
	inRange := func(name string, v *int32, low, high int32, what string) {
		if v != nil && (*v < low || *v > high) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(name), *v, fmt.Sprintf("must be between %d and %d: %s", low, high, what)))
		}
	}
	inRange("analysisSeconds", c.AnalysisSeconds, operator.MinCanaryAnalysisSeconds, operator.MaxCanaryAnalysisSeconds, "the seconds the canary pods are compared")
	inRange("maxErrorPercent", c.MaxErrorPercent, 0, 100, "percentage points of 5xx answers")
	inRange("maxLatencyPercent", c.MaxLatencyPercent, 0, operator.MaxCanaryLatencyPercent, "percent of the other pods' latency")
	inRange("minRequests", c.MinRequests, 1, operator.MaxCanaryMinRequests, "requests the canary pods answer in the window")
	return allErrs
}
