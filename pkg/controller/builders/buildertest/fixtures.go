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

// Package buildertest holds the NginxOperators the controller's tests build from, so that
// the builders' tests and the reconciler's start from the same objects.
package buildertest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Sample is a defaulted NginxOperator, as the controller reads it from the API.
func Sample(name string) *v1alpha2.NginxOperator {
	return &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name + "-uid"), Generation: 1},
		Spec: v1alpha2.NginxOperatorSpec{
			Image:    "nginx:1.27.4",
			Replicas: ptr.To[int32](2),
			Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
		},
	}
}

// WithMetricsOn switches the exporter sidecar on.
func WithMetricsOn(no *v1alpha2.NginxOperator) *v1alpha2.NginxOperator {
	no.Spec.Metrics = &v1alpha2.MetricsSpec{Enabled: ptr.To(true)}
	return no
}

// Reloading is Sample in Reload mode with an inline configuration.
func Reloading(name, conf string) *v1alpha2.NginxOperator {
	no := WithMetricsOn(Sample(name))
	no.Spec.ContentUpdate = v1alpha2.ContentUpdateReload
	no.Spec.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](101)}
	no.Spec.Config = &v1alpha2.ConfigSource{Inline: conf}
	return no
}
