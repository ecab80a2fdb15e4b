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
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// setPodOptions copies spec.pod's placement and identity settings into the pod spec; its
// security context is merged with the restricted defaults (restricted.go). A topology
// spread constraint without a label selector spreads the NginxOperator's own pods, which
// is what a user leaving it out means.
func setPodOptions(podSpec *corev1ac.PodSpecApplyConfiguration, pod *v1alpha2.PodOptions, selector map[string]string) error {
	if len(pod.NodeSelector) > 0 {
		podSpec.WithNodeSelector(pod.NodeSelector)
	}
	for i := range pod.Tolerations {
		t, err := convert[corev1ac.TolerationApplyConfiguration](&pod.Tolerations[i])
		if err != nil {
			return err
		}
		podSpec.WithTolerations(t)
	}
	if pod.Affinity != nil {
		a, err := convert[corev1ac.AffinityApplyConfiguration](pod.Affinity)
		if err != nil {
			return err
		}
		podSpec.WithAffinity(a)
	}
	for i := range pod.TopologySpreadConstraints {
		c, err := convert[corev1ac.TopologySpreadConstraintApplyConfiguration](&pod.TopologySpreadConstraints[i])
		if err != nil {
			return err
		}
		if c.LabelSelector == nil {
			c.WithLabelSelector(metav1ac.LabelSelector().WithMatchLabels(selector))
		}
		podSpec.WithTopologySpreadConstraints(c)
	}
	if pod.PriorityClassName != "" {
		podSpec.WithPriorityClassName(pod.PriorityClassName)
	}
	for _, s := range pod.ImagePullSecrets {
		podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(s.Name))
	}
	if pod.ServiceAccountName != "" {
		podSpec.WithServiceAccountName(pod.ServiceAccountName)
	}
	return nil
}
