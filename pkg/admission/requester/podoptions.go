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

package requester

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// podOptionAsks lists what spec.pod decides that only a pod's creator decides: what the
// pods look like to others and where they run. Labels make the pods endpoints of other
// Services and let them past NetworkPolicies; annotations steer the kubelet (AppArmor),
// meshes and other controllers; tolerations, node selection and priority reach nodes and
// preempt pods that others placed; pod affinity and spread constraints with a selector
// reveal where other pods run. Each takes create on pods, as setting it on a pod would.
func podOptionAsks(path *field.Path, pod *operator.PodOptions) []ask {
	var out []ask
	add := func(set bool, child, what string) {
		if set {
			out = append(out, beyondRestricted(path.Child(child), what))
		}
	}
	add(len(pod.Labels) > 0, "labels", "pod labels")
	add(len(pod.Annotations) > 0, "annotations", "pod annotations")
	add(len(pod.NodeSelector) > 0, "nodeSelector", "a node selector")
	add(pod.Affinity != nil, "affinity", "affinity")
	add(len(pod.Tolerations) > 0, "tolerations", "tolerations")
	add(pod.PriorityClassName != "", "priorityClassName", "priority class "+pod.PriorityClassName)
	// Without a selector a constraint spreads the NginxOperator's own pods (the controller
	// fills in their labels), which reveals nothing.
	for i, c := range pod.TopologySpreadConstraints {
		if c.LabelSelector != nil {
			out = append(out, beyondRestricted(path.Child("topologySpreadConstraints").Index(i).Child("labelSelector"), "spreading by other pods' labels"))
		}
	}
	return out
}
