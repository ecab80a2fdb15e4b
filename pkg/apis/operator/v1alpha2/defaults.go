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

package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// DefaultImage is the pinned nginx image used when spec.image is empty.
const DefaultImage = "nginx:1.27.4"

// DefaultPortName and DefaultPortNumber describe the port used when spec.ports is empty.
const (
	DefaultPortName   = "http"
	DefaultPortNumber = 80
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_NginxOperatorSpec fills what a user may leave out.
func SetDefaults_NginxOperatorSpec(spec *NginxOperatorSpec) {
	if spec.Image == "" {
		spec.Image = DefaultImage
	}
	if spec.Replicas == nil && spec.QPS == nil {
		spec.Replicas = ptr.To(operand.DefaultReplicas)
	}
	if len(spec.Ports) == 0 {
		spec.Ports = []corev1.ContainerPort{{Name: DefaultPortName, ContainerPort: DefaultPortNumber, Protocol: corev1.ProtocolTCP}}
	}
	if spec.Service == nil {
		spec.Service = &ServiceSpec{}
	}
	setServiceDefaults(spec.Service, spec.Ports)
}

// setServiceDefaults exposes every container port when no Service port is listed,
// and lets a Service port default to the number of the container port it targets.
func setServiceDefaults(svc *ServiceSpec, ports []corev1.ContainerPort) {
	if svc.Type == "" {
		svc.Type = ServiceTypeClusterIP
	}
	if len(svc.Ports) == 0 {
		for _, p := range ports {
			svc.Ports = append(svc.Ports, ServicePort{Name: p.Name})
		}
	}
	for i := range svc.Ports {
		if svc.Ports[i].Port != 0 {
			continue
		}
		for _, p := range ports {
			if p.Name == svc.Ports[i].Name {
				svc.Ports[i].Port = p.ContainerPort
				break
			}
		}
	}
}
