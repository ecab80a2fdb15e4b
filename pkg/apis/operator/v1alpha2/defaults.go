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

// DefaultImage is the nginx of an NginxOperator created without an image: NGINX's own
// unprivileged build of the pinned release (user 101, port 8080), so that the pods are
// admitted where the restricted Pod Security standard is enforced. docs/design.md gives
// the reasoning.
const DefaultImage = operand.DefaultImage

// Names and numbers of the default ports. The default image listens on the unprivileged
// numbers; an image a user names gets the well-known ones, as stock nginx listens there.
// The Service listens on the well-known numbers in both cases.
const (
	DefaultPortName       = "http"
	DefaultHTTPSPortName  = "https"
	DefaultPortNumber     = 80
	DefaultHTTPSPort      = 443
	UnprivilegedHTTPPort  = 8080
	UnprivilegedHTTPSPort = 8443
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_NginxOperatorSpec fills what a user may leave out. Defaulting also runs on
// every object read from storage, so a default may only fill what is empty: a stored
// object always has an image and ports, and its meaning never changes on read.
func SetDefaults_NginxOperatorSpec(spec *NginxOperatorSpec) {
	defaultImage := spec.Image == ""
	if defaultImage {
		spec.Image = DefaultImage
		setRestrictedSecurityDefaults(spec)
	}
	if spec.Replicas == nil && spec.QPS == nil {
		spec.Replicas = ptr.To(operand.DefaultReplicas)
	}
	if spec.Service == nil {
		spec.Service = &ServiceSpec{}
	}
	if len(spec.Ports) == 0 {
		http, https := int32(DefaultPortNumber), int32(DefaultHTTPSPort)
		if defaultImage {
			http, https = UnprivilegedHTTPPort, UnprivilegedHTTPSPort
		}
		spec.Ports = []corev1.ContainerPort{{Name: DefaultPortName, ContainerPort: http, Protocol: corev1.ProtocolTCP}}
		if len(spec.TLS) > 0 {
			spec.Ports = append(spec.Ports, corev1.ContainerPort{Name: DefaultHTTPSPortName, ContainerPort: https, Protocol: corev1.ProtocolTCP})
		}
		// The Service of default ports listens where clients expect HTTP and HTTPS.
		if len(spec.Service.Ports) == 0 {
			spec.Service.Ports = []ServicePort{{Name: DefaultPortName, Port: DefaultPortNumber}}
			if len(spec.TLS) > 0 {
				spec.Service.Ports = append(spec.Service.Ports, ServicePort{Name: DefaultHTTPSPortName, Port: DefaultHTTPSPort})
			}
		}
	}
	setServiceDefaults(spec.Service, spec.Ports)
	// Metrics are on unless switched off, or unless nginx's own ports already take the
	// exporter's port name or number (a metrics sidecar of the user's own, typically):
	// those stay as they are. Unlike the defaults above, this one also fills in objects
	// stored before spec.metrics existed: their pods gain the exporter and roll once after
	// the upgrade (docs/api.md).
	if spec.Metrics == nil {
		spec.Metrics = &MetricsSpec{}
	}
	if spec.Metrics.Enabled == nil {
		spec.Metrics.Enabled = ptr.To(!operand.TakesMetricsPort(spec.Ports))
	}
	// spec.contentUpdate has no default: unset means "reload where the pods can", which
	// depends on the image and the security contexts. A stored default would turn invalid
	// when either changes (a new image whose user is unknown), refusing an update of a
	// field the writer never set.
}

// NginxUser is the user nginx runs as when the spec says it (operand.NginxUser).
func NginxUser(spec *NginxOperatorSpec) (int64, bool) {
	var container, pod *int64
	if spec.SecurityContext != nil {
		container = spec.SecurityContext.RunAsUser
	}
	if spec.Pod != nil && spec.Pod.SecurityContext != nil {
		pod = spec.Pod.SecurityContext.RunAsUser
	}
	return operand.NginxUser(container, pod, spec.Image)
}

// setRestrictedSecurityDefaults gives the default image's pods what the restricted Pod
// Security standard asks for, where the spec sets nothing itself. An image a user names
// gets none: stock images such as nginx:1.27.4 start as root and would fail under it.
func setRestrictedSecurityDefaults(spec *NginxOperatorSpec) {
	if spec.SecurityContext == nil {
		spec.SecurityContext = RestrictedSecurityContext()
	}
	if spec.Pod == nil {
		spec.Pod = &PodOptions{}
	}
	if spec.Pod.SecurityContext == nil {
		spec.Pod.SecurityContext = RestrictedPodSecurityContext()
	}
}

// RestrictedSecurityContext is the nginx container's security context that defaulting
// gives the default image: what the restricted Pod Security standard asks of a container.
// v1alpha1's conversion gives it to every v1alpha1 object, which runs the default image, so
// that such an object and a v1alpha2 one created with defaults only are the same object.
// Each call returns a new value the caller may change.
func RestrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// RestrictedPodSecurityContext is the pod security context that defaulting gives the
// default image, for the same reason and the same users as RestrictedSecurityContext.
// Each call returns a new value the caller may change.
func RestrictedPodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
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
	// By name through a map: defaulting runs before validation bounds the lists, so a
	// request with thousands of ports must not cost their product.
	byName := make(map[string]int32, len(ports))
	for i := len(ports) - 1; i >= 0; i-- { // the first port of a name wins, as before
		byName[ports[i].Name] = ports[i].ContainerPort
	}
	for i := range svc.Ports {
		if svc.Ports[i].Port != 0 {
			continue
		}
		if port, found := byName[svc.Ports[i].Name]; found {
			svc.Ports[i].Port = port
		}
	}
}
