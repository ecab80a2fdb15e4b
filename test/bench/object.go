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

package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// benchSpec is a realistic small spec: image, a named port, an environment variable,
// requests and limits, and a Service.
func benchSpec(replicas *int32) v1alpha2.NginxOperatorSpec {
	return v1alpha2.NginxOperatorSpec{
		Image:    "nginx:1.27.4",
		Replicas: replicas,
		Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
		Env:      []corev1.EnvVar{{Name: "NGINX_ENTRYPOINT_QUIET_LOGS", Value: "1"}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		Service: &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
	}
}

// smallSpec is the smallest useful spec: image, replicas and one port.
func smallSpec(replicas *int32) v1alpha2.NginxOperatorSpec {
	return v1alpha2.NginxOperatorSpec{
		Image:    "nginx:1.27.4",
		Replicas: replicas,
		Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
	}
}
