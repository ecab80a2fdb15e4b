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

// validateNeighbours refuses what would harm other tenants or the cluster's operations:
// required pod anti-affinity beyond the object's own namespace, and a
// PodDisruptionBudget that can never allow a disruption. Both were accepted before
// these rules, so updates ratchet them (see ratchet).
func validateNeighbours(spec *operator.NginxOperatorSpec, namespace string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Pod != nil && spec.Pod.Affinity != nil && spec.Pod.Affinity.PodAntiAffinity != nil {
		termsPath := fldPath.Child("pod", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
		for i, term := range spec.Pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			idxPath := termsPath.Index(i)
			if term.NamespaceSelector != nil {
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("namespaceSelector"), crossNamespaceAntiAffinity))
			}
			for j, ns := range term.Namespaces {
				if ns != namespace {
					allErrs = append(allErrs, field.Forbidden(idxPath.Child("namespaces").Index(j), fmt.Sprintf("%q is not this NginxOperator's namespace %q: %s", ns, namespace, crossNamespaceAntiAffinity)))
				}
			}
		}
	}
	if pdb := spec.PodDisruptionBudget; pdb != nil {
		pdbPath := fldPath.Child("podDisruptionBudget")
		if v := pdb.MaxUnavailable; v != nil && isZero(*v) {
			allErrs = append(allErrs, field.Invalid(pdbPath.Child("maxUnavailable"), v.String(), noDisruption))
		}
		if v := pdb.MinAvailable; v != nil && v.Type == intstr.String && v.StrVal == "100%" {
			allErrs = append(allErrs, field.Invalid(pdbPath.Child("minAvailable"), v.String(), noDisruption))
		}
	}
	return allErrs
}

const (
	crossNamespaceAntiAffinity = "a required anti-affinity term may only select pods of the NginxOperator's own namespace " +
		"(leave namespaces and namespaceSelector unset): the scheduler honours it in both directions, so it would also keep " +
		"other tenants' matching pods off every node or zone where these pods run. Use preferredDuringSchedulingIgnoredDuringExecution " +
		"to spread away from pods of other namespaces"
	noDisruption = "a PodDisruptionBudget that allows no disruption blocks every node drain and cluster upgrade; " +
		"use maxUnavailable: 1 (or a percentage above 0%), or leave spec.podDisruptionBudget unset"
)

// isZero is true for 0 and for a percentage of zero ("0%", "00%").
func isZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, false)
	return err == nil && n == 0
}

// WarningsForNginxOperator are the warnings of a create or update of the main
// resource: a PodDisruptionBudget whose minAvailable leaves no pod to disrupt at the
// current replica count. That is not refused: an autoscaler may keep the count above
// it, and scaling up makes the budget allow disruptions again.
func WarningsForNginxOperator(obj *operator.NginxOperator) []string {
	spec := &obj.Spec
	pdb := spec.PodDisruptionBudget
	if pdb == nil || pdb.MinAvailable == nil {
		return nil
	}
	if spec.QPS != nil && spec.QPS.SinglePodQPS <= 0 {
		return nil // refused by validation
	}
	replicas := spec.DesiredReplicas()
	if replicas <= 0 {
		return nil
	}
	v := *pdb.MinAvailable
	if v.Type == intstr.String && v.StrVal == "100%" {
		return nil // refused by validation
	}
	// The disruption controller rounds a percentage of minAvailable up.
	required, err := intstr.GetScaledValueFromIntOrPercent(&v, int(replicas), true)
	if err != nil || required < int(replicas) {
		return nil
	}
	return []string{fmt.Sprintf("spec.podDisruptionBudget.minAvailable: %s requires %d of the %d desired pods to stay available, "+
		"so the PodDisruptionBudget allows no disruption: node drains and cluster upgrades wait until more replicas run; "+
		"prefer maxUnavailable: 1", v.String(), required, replicas)}
}
