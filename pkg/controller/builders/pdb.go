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

package builders

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// PodDisruptionBudget returns the PodDisruptionBudget spec.podDisruptionBudget asks for,
// nil when it asks for none. It has the NginxOperator's name and selects its pods.
func PodDisruptionBudget(no *v1alpha2.NginxOperator) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	want := no.Spec.PodDisruptionBudget
	if want == nil {
		return nil
	}
	spec := policyv1ac.PodDisruptionBudgetSpec().WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(no)))
	if want.MinAvailable != nil {
		spec.WithMinAvailable(*want.MinAvailable)
	}
	if want.MaxUnavailable != nil {
		spec.WithMaxUnavailable(*want.MaxUnavailable)
	}
	return policyv1ac.PodDisruptionBudget(no.Name, no.Namespace).
		WithLabels(objectLabels(no)).
		WithOwnerReferences(ownerReference(no)).
		WithSpec(spec)
}
