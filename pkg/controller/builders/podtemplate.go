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
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// podTemplate is the Deployment's pod: the nginx container, the exporter when spec.metrics
// is on, spec.pod's settings, and the labels and annotations of the template.
func podTemplate(no *v1alpha2.NginxOperator, contentHash, exporterImage string) (*corev1ac.PodTemplateSpecApplyConfiguration, error) {
	spec := &no.Spec
	var podSecurity *corev1.PodSecurityContext
	if spec.Pod != nil {
		podSecurity = spec.Pod.SecurityContext
	}
	containerSecurity, podSecurity := restrictedSecurity(spec.SecurityContext, podSecurity)
	volumes, volumeMounts := mounts(no)
	container, err := nginxContainer(spec, containerSecurity, volumeMounts)
	if err != nil {
		return nil, err
	}
	podSpec, err := basePodSpec(spec, podSecurity)
	if err != nil {
		return nil, err
	}
	containers := []*corev1ac.ContainerApplyConfiguration{container}
	if MetricsEnabled(spec) {
		containers, volumes = withMetrics(no, exporterImage, podSpec, container, volumes)
	}
	podSpec.WithContainers(containers...).WithVolumes(volumes...)
	template := corev1ac.PodTemplateSpec().WithSpec(podSpec)
	if pod := spec.Pod; pod != nil {
		if err := setPodOptions(podSpec, pod, SelectorLabels(no)); err != nil {
			return nil, err
		}
		template.WithLabels(pod.Labels)
	}
	// The controller's own labels are set last, so they win over the user's (validation
	// refuses the clashing labels).
	template.WithLabels(objectLabels(no))
	if annotations := templateAnnotations(no, contentHash); len(annotations) > 0 {
		template.WithAnnotations(annotations)
	}
	return template, nil
}

// basePodSpec is the pod's token and security settings, before containers and volumes.
func basePodSpec(spec *v1alpha2.NginxOperatorSpec, podSecurity *corev1.PodSecurityContext) (*corev1ac.PodSpecApplyConfiguration, error) {
	// nginx needs no API access: the pods carry a ServiceAccount token only when the spec
	// names a ServiceAccount, which its writer was authorized to act as (docs/security.md).
	automountToken := spec.Pod != nil && spec.Pod.ServiceAccountName != ""
	podSpec := corev1ac.PodSpec().WithAutomountServiceAccountToken(automountToken)
	if !apiequality.Semantic.DeepEqual(podSecurity, &corev1.PodSecurityContext{}) {
		psc, err := convert[corev1ac.PodSecurityContextApplyConfiguration](podSecurity)
		if err != nil {
			return nil, err
		}
		podSpec.WithSecurityContext(psc)
	}
	return podSpec, nil
}

// templateAnnotations are spec.pod's annotations and the controller's own, which win.
func templateAnnotations(no *v1alpha2.NginxOperator, contentHash string) map[string]string {
	spec := &no.Spec
	annotations := map[string]string{}
	if pod := spec.Pod; pod != nil {
		// The controller's prefix is its own (validation refuses it): a user's value could
		// steer the sidecar or the reload handshake, so none is copied, stored before or not.
		for k, v := range pod.Annotations {
			if !strings.HasPrefix(k, controllerAnnotationPrefix) {
				annotations[k] = v
			}
		}
	}
	reload := Reloads(spec)
	if MetricsEnabled(spec) {
		annotations[StatusConfigAnnotation] = StatusConfig
	}
	if reload && spec.Config != nil {
		annotations[MainConfigAnnotation] = MainConfig
	}
	if Stages(spec) {
		annotations[MainConfigAnnotation] = StagedMainConfig
		annotations[IncludeAnnotation] = Include(false)
		annotations[AccessLogAnnotation] = AccessLogConfig
	}
	if spec.ForceRedeploy != "" {
		annotations[ForceRedeployAnnotation] = spec.ForceRedeploy
	}
	// In Reload mode new content reaches the running pods (pkg/controller/content); only a
	// rollout needs the hash in the template.
	if contentHash != "" && !reload {
		annotations[ContentHashAnnotation] = contentHash
	}
	return annotations
}
