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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Service returns the Service the NginxOperator asks for. Ports target container ports
// by name. clusterIP and unspecified nodePorts are not set, so the values Kubernetes
// allocated stay as they are.
func Service(no *v1alpha2.NginxOperator) *corev1ac.ServiceApplyConfiguration {
	svcType := corev1.ServiceTypeClusterIP
	var ports []v1alpha2.ServicePort
	if no.Spec.Service != nil {
		if no.Spec.Service.Type != "" {
			svcType = corev1.ServiceType(no.Spec.Service.Type)
		}
		ports = no.Spec.Service.Ports
	}
	spec := corev1ac.ServiceSpec().WithType(svcType).WithSelector(SelectorLabels(no))
	for _, p := range ports {
		port := corev1ac.ServicePort().
			WithName(p.Name).
			WithPort(p.Port).
			WithTargetPort(intstr.FromString(p.Name)).
			WithProtocol(containerPortProtocol(no.Spec.Ports, p.Name))
		if p.NodePort != nil && svcType != corev1.ServiceTypeClusterIP {
			port.WithNodePort(*p.NodePort)
		}
		spec.WithPorts(port)
	}
	svc := corev1ac.Service(no.Name, no.Namespace)
	if extra := no.Spec.Service; extra != nil {
		svc.WithLabels(extra.Labels)
		if len(extra.Annotations) > 0 {
			svc.WithAnnotations(extra.Annotations)
		}
		if extra.ExternalTrafficPolicy != "" && svcType != corev1.ServiceTypeClusterIP {
			spec.WithExternalTrafficPolicy(extra.ExternalTrafficPolicy)
		}
		if len(extra.LoadBalancerSourceRanges) > 0 && svcType == corev1.ServiceTypeLoadBalancer {
			spec.WithLoadBalancerSourceRanges(extra.LoadBalancerSourceRanges...)
		}
	}
	return svc.WithLabels(objectLabels(no)).
		WithOwnerReferences(ownerReference(no)).
		WithSpec(spec)
}

func containerPortProtocol(ports []corev1.ContainerPort, name string) corev1.Protocol {
	for _, p := range ports {
		if p.Name == name {
			return ProtocolOrTCP(p.Protocol)
		}
	}
	return corev1.ProtocolTCP
}
