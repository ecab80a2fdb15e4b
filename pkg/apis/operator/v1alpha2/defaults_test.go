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

package v1alpha2_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// stockImage is an image a user names: stock nginx, which starts as root on port 80.
const stockImage = "nginx:1.27.4"

func TestDefaults(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	cases := []struct {
		name string
		in   v1alpha2.NginxOperatorSpec
		want v1alpha2.NginxOperatorSpec
	}{{
		name: "empty spec: the unprivileged image on 8080, restricted, the Service on 80",
		want: v1alpha2.NginxOperatorSpec{
			Image:           v1alpha2.DefaultImage,
			Replicas:        ptr.To[int32](1),
			Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Service:         &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			SecurityContext: restrictedContainer(),
			Pod:             &v1alpha2.PodOptions{SecurityContext: restrictedPod()},
		},
	}, {
		name: "qps mode leaves replicas unset",
		in:   v1alpha2.NginxOperatorSpec{QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}},
		want: v1alpha2.NginxOperatorSpec{
			Image:           v1alpha2.DefaultImage,
			QPS:             &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400},
			Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Service:         &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			SecurityContext: restrictedContainer(),
			Pod:             &v1alpha2.PodOptions{SecurityContext: restrictedPod()},
		},
	}, {
		name: "a named image keeps the well-known port and gets no security context",
		in:   v1alpha2.NginxOperatorSpec{Image: stockImage},
		want: v1alpha2.NginxOperatorSpec{
			Image:    stockImage,
			Replicas: ptr.To[int32](1),
			Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
		},
	}, {
		name: "tls adds an https port, 8443 for the default image, 443 on the Service",
		in:   v1alpha2.NginxOperatorSpec{TLS: []v1alpha2.TLSSecret{{SecretName: "site-tls"}}},
		want: v1alpha2.NginxOperatorSpec{
			Image:    v1alpha2.DefaultImage,
			Replicas: ptr.To[int32](1),
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
				{Name: "https", ContainerPort: 8443, Protocol: corev1.ProtocolTCP},
			},
			Service:         &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}},
			TLS:             []v1alpha2.TLSSecret{{SecretName: "site-tls"}},
			SecurityContext: restrictedContainer(),
			Pod:             &v1alpha2.PodOptions{SecurityContext: restrictedPod()},
		},
	}, {
		name: "tls with a named image: 443",
		in:   v1alpha2.NginxOperatorSpec{Image: "nginx:mainline", TLS: []v1alpha2.TLSSecret{{SecretName: "site-tls"}}},
		want: v1alpha2.NginxOperatorSpec{
			Image:    "nginx:mainline",
			Replicas: ptr.To[int32](1),
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP},
				{Name: "https", ContainerPort: 443, Protocol: corev1.ProtocolTCP},
			},
			Service: &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}},
			TLS:     []v1alpha2.TLSSecret{{SecretName: "site-tls"}},
		},
	}, {
		name: "a security context given with the default image is kept",
		in: v1alpha2.NginxOperatorSpec{
			SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)},
			Pod:             &v1alpha2.PodOptions{NodeSelector: map[string]string{"disk": "ssd"}, SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](101)}},
		},
		want: v1alpha2.NginxOperatorSpec{
			Image:           v1alpha2.DefaultImage,
			Replicas:        ptr.To[int32](1),
			Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Service:         &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)},
			Pod:             &v1alpha2.PodOptions{NodeSelector: map[string]string{"disk": "ssd"}, SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](101)}},
		},
	}, {
		name: "explicit values are kept; service ports default to their container port",
		in: v1alpha2.NginxOperatorSpec{
			Image:    "nginx:mainline",
			Replicas: ptr.To[int32](0),
			Ports:    []corev1.ContainerPort{{Name: "web", ContainerPort: 8080}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeNodePort, Ports: []v1alpha2.ServicePort{{Name: "web"}, {Name: "dns", Port: 5353}}},
		},
		want: v1alpha2.NginxOperatorSpec{
			Image:    "nginx:mainline",
			Replicas: ptr.To[int32](0),
			Ports:    []corev1.ContainerPort{{Name: "web", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeNodePort, Ports: []v1alpha2.ServicePort{{Name: "web", Port: 8080}, {Name: "dns", Port: 5353}}},
		},
	}, {
		name: "service without ports exposes every container port",
		in: v1alpha2.NginxOperatorSpec{
			Replicas: ptr.To[int32](3),
			Ports:    []corev1.ContainerPort{{Name: "a", ContainerPort: 1000, Protocol: corev1.ProtocolTCP}, {Name: "b", ContainerPort: 2000, Protocol: corev1.ProtocolTCP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeLoadBalancer},
		},
		want: v1alpha2.NginxOperatorSpec{
			Image:           v1alpha2.DefaultImage,
			Replicas:        ptr.To[int32](3),
			Ports:           []corev1.ContainerPort{{Name: "a", ContainerPort: 1000, Protocol: corev1.ProtocolTCP}, {Name: "b", ContainerPort: 2000, Protocol: corev1.ProtocolTCP}},
			Service:         &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeLoadBalancer, Ports: []v1alpha2.ServicePort{{Name: "a", Port: 1000}, {Name: "b", Port: 2000}}},
			SecurityContext: restrictedContainer(),
			Pod:             &v1alpha2.PodOptions{SecurityContext: restrictedPod()},
		},
	}, {
		name: "metrics switched off stay off",
		in:   v1alpha2.NginxOperatorSpec{Image: stockImage, Metrics: &v1alpha2.MetricsSpec{Enabled: ptr.To(false)}},
		want: v1alpha2.NginxOperatorSpec{
			Image:    stockImage,
			Replicas: ptr.To[int32](1),
			Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			Metrics:  &v1alpha2.MetricsSpec{Enabled: ptr.To(false)},
		},
	}, {
		name: "metrics stay off where nginx has a port named metrics or on 9113 itself",
		in: v1alpha2.NginxOperatorSpec{Image: stockImage, Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {Name: "prom", ContainerPort: 9113, Protocol: corev1.ProtocolTCP}}},
		want: v1alpha2.NginxOperatorSpec{
			Image:    stockImage,
			Replicas: ptr.To[int32](1),
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {Name: "prom", ContainerPort: 9113, Protocol: corev1.ProtocolTCP}},
			Service: &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}, {Name: "prom", Port: 9113}}},
			Metrics: &v1alpha2.MetricsSpec{Enabled: ptr.To(false)},
		},
	}, {
		name: "metrics: {} are on",
		in:   v1alpha2.NginxOperatorSpec{Image: stockImage, Metrics: &v1alpha2.MetricsSpec{}},
		want: v1alpha2.NginxOperatorSpec{
			Image:    stockImage,
			Replicas: ptr.To[int32](1),
			Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			Metrics:  &v1alpha2.MetricsSpec{Enabled: ptr.To(true)},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Every case but the explicit ones expects metrics on. spec.contentUpdate is
			// never defaulted (the controller decides an unset one).
			if tc.want.Metrics == nil {
				tc.want.Metrics = &v1alpha2.MetricsSpec{Enabled: ptr.To(true)}
			}
			tc.want.ContentUpdate = tc.in.ContentUpdate
			obj := &v1alpha2.NginxOperator{Spec: tc.in}
			scheme.Default(obj)
			if diff := cmp.Diff(tc.want, obj.Spec); diff != "" {
				t.Errorf("defaulted spec (-want +got):\n%s", diff)
			}
		})
	}
}

func restrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

func restrictedPod() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}
