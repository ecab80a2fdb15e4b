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
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders/buildertest"
)

// The shared fixtures (buildertest), under the names the tests use.
var (
	sample        = buildertest.Sample
	withMetricsOn = buildertest.WithMetricsOn
	reloading     = buildertest.Reloading
)

func TestDesiredReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec v1alpha2.NginxOperatorSpec
		want int32
	}{
		{"replicas", v1alpha2.NginxOperatorSpec{Replicas: ptr.To[int32](4)}, 4},
		{"zero replicas", v1alpha2.NginxOperatorSpec{Replicas: ptr.To[int32](0)}, 0},
		{"unset means the default", v1alpha2.NginxOperatorSpec{}, 1},
		{"qps exact", v1alpha2.NginxOperatorSpec{QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}}, 3},
		{"qps rounds up", v1alpha2.NginxOperatorSpec{QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2401}}, 4},
		{"qps below one pod", v1alpha2.NginxOperatorSpec{QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 1}}, 1},
		{"qps zero load scales to zero", v1alpha2.NginxOperatorSpec{QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 0}}, 0},
	} {
		if got := DesiredReplicas(&tc.spec); got != tc.want {
			t.Errorf("%s: DesiredReplicas = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestDeployment(t *testing.T) {
	no := sample("web")
	no.Spec.Ports = append(no.Spec.Ports, corev1.ContainerPort{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP})
	no.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	no.Spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
	no.Spec.ForceRedeploy = "v2"

	d, err := Deployment(no, "")
	if err != nil {
		t.Fatal(err)
	}
	if *d.Name != "web" || *d.Namespace != "shop" || *d.Spec.Replicas != 2 {
		t.Errorf("identity/replicas: %s/%s %d", *d.Namespace, *d.Name, *d.Spec.Replicas)
	}
	owner := d.OwnerReferences[0]
	if *owner.Kind != "NginxOperator" || *owner.APIVersion != "operator.example.com/v1alpha2" || *owner.UID != "web-uid" || !*owner.Controller || !*owner.BlockOwnerDeletion {
		t.Errorf("owner reference = %+v", owner)
	}
	wantSelector := map[string]string{"app.kubernetes.io/name": "nginx", "app.kubernetes.io/instance": "web"}
	if !equalMaps(d.Spec.Selector.MatchLabels, wantSelector) {
		t.Errorf("selector = %v", d.Spec.Selector.MatchLabels)
	}
	for k, v := range wantSelector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("template labels %v do not carry the selector", d.Spec.Template.Labels)
		}
	}
	if d.Spec.Template.Annotations[ForceRedeployAnnotation] != "v2" {
		t.Errorf("template annotations = %v", d.Spec.Template.Annotations)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if *c.Name != ContainerName || *c.Image != "nginx:1.27.4" || len(c.Ports) != 2 || *c.Ports[1].Protocol != corev1.ProtocolUDP {
		t.Errorf("container = %s", mustJSON(c))
	}
	if len(c.Env) != 2 || *c.Env[1].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("env = %s", mustJSON(c.Env))
	}
	if q := (*c.Resources.Limits)[corev1.ResourceMemory]; q.String() != "128Mi" || c.Resources.Requests != nil {
		t.Errorf("resources = %s", mustJSON(c.Resources))
	}
	if *c.ReadinessProbe.TCPSocket.Port != intstr.FromString("http") || *c.LivenessProbe.TCPSocket.Port != intstr.FromString("http") {
		t.Errorf("probes = %s %s", mustJSON(c.ReadinessProbe), mustJSON(c.LivenessProbe))
	}

	// nginx gets no ServiceAccount token unless the spec names a ServiceAccount.
	if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken = %v, want false", a)
	}
	withSA := sample("web")
	withSA.Spec.Pod = &v1alpha2.PodOptions{ServiceAccountName: "reader"}
	if d, _ := Deployment(withSA, ""); d.Spec.Template.Spec.AutomountServiceAccountToken == nil || !*d.Spec.Template.Spec.AutomountServiceAccountToken || *d.Spec.Template.Spec.ServiceAccountName != "reader" {
		t.Errorf("with spec.pod.serviceAccountName the pods run as it with its token: %s", mustJSON(d.Spec.Template.Spec))
	}

	// Another instance in the namespace selects only its own pods.
	other, _ := Deployment(sample("api"), "")
	if equalMaps(other.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
		t.Error("two NginxOperators share a selector")
	}
}

func TestDeploymentOptionalParts(t *testing.T) {
	no := sample("udp")
	no.Spec.Ports = []corev1.ContainerPort{{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
	no.Spec.Replicas = nil
	no.Spec.QPS = &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}
	d, err := Deployment(no, "")
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe != nil || c.LivenessProbe != nil {
		t.Error("a TCP probe on a UDP-only container would never pass")
	}
	if c.Resources != nil || c.Env != nil || d.Spec.Template.Annotations != nil {
		t.Errorf("unset fields must stay unset so Kubernetes defaults apply: %s", mustJSON(d.Spec.Template))
	}
	if *d.Spec.Replicas != 3 {
		t.Errorf("QPS-mode replicas = %d, want 3", *d.Spec.Replicas)
	}
}

func TestService(t *testing.T) {
	no := sample("web")
	no.Spec.Ports = append(no.Spec.Ports, corev1.ContainerPort{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP})
	no.Spec.Service = &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeNodePort, Ports: []v1alpha2.ServicePort{
		{Name: "http", Port: 8080, NodePort: ptr.To[int32](30080)},
		{Name: "dns", Port: 53},
	}}
	s := Service(no)
	if *s.Spec.Type != corev1.ServiceTypeNodePort || *s.OwnerReferences[0].UID != "web-uid" {
		t.Errorf("service = %s", mustJSON(s))
	}
	if s.Spec.ClusterIP != nil {
		t.Error("clusterIP must be left to the API server")
	}
	http, dns := s.Spec.Ports[0], s.Spec.Ports[1]
	if *http.Port != 8080 || *http.TargetPort != intstr.FromString("http") || *http.NodePort != 30080 || *http.Protocol != corev1.ProtocolTCP {
		t.Errorf("http port = %s", mustJSON(http))
	}
	if *dns.Protocol != corev1.ProtocolUDP || dns.NodePort != nil {
		t.Errorf("dns port = %s (an unset nodePort stays whatever was allocated)", mustJSON(dns))
	}
	if !equalMaps(s.Spec.Selector, SelectorLabels(no)) {
		t.Errorf("selector = %v", s.Spec.Selector)
	}

	no.Spec.Service.Type = v1alpha2.ServiceTypeClusterIP
	no.Spec.Service.Ports[0].NodePort = nil
	if s := Service(no); *s.Spec.Type != corev1.ServiceTypeClusterIP || s.Spec.Ports[0].NodePort != nil {
		t.Errorf("ClusterIP service = %s", mustJSON(s))
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
