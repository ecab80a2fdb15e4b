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

package v1alpha1_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return scheme
}

// overTheWire encodes a v1alpha1 object in the wire format and decodes it again, without
// conversion or defaulting, as a client and the server see it.
func overTheWire(t *testing.T, scheme *runtime.Scheme, mediaType string, in *v1alpha1.NginxOperator) *v1alpha1.NginxOperator {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no serializer for %s", mediaType)
	}
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion), in)
	if err != nil {
		t.Fatalf("encode %s: %v", mediaType, err)
	}
	out, err := runtime.Decode(info.Serializer, data)
	if err != nil {
		t.Fatalf("decode %s: %v", mediaType, err)
	}
	return out.(*v1alpha1.NginxOperator)
}

// convert goes from in to a fresh out through the scheme, as the apiserver does.
func convert[T runtime.Object](t *testing.T, scheme *runtime.Scheme, in runtime.Object, out T) T {
	t.Helper()
	if err := scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("convert %T to %T: %v", in, out, err)
	}
	return out
}

// stockImage is what v1alpha1 objects ran up to release 0.1: stock nginx, as root on 80.
const stockImage = "nginx:1.27.4"

// restricted are the security contexts v1alpha2 defaulting gives the default image,
// spelled out here rather than taken from the code under test.
func restricted() (*corev1.SecurityContext, *corev1.PodSecurityContext) {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		&corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}

// A v1alpha1 object runs the default unprivileged image, restricted, on 8080; its port is
// the Service's.
func TestPlainV1alpha1NeedsNoAnnotation(t *testing.T) {
	scheme := newScheme()
	in := &v1alpha1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec:       v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](9090), Replicas: ptr.To[int32](2), ForceRedploy: "a"},
	}
	internal := convert(t, scheme, in, &operator.NginxOperator{})
	container, pod := restricted()
	wantSpec := operator.NginxOperatorSpec{
		Image:           "nginxinc/nginx-unprivileged:1.27.4",
		Replicas:        ptr.To[int32](2),
		ForceRedeploy:   "a",
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Service:         &operator.ServiceSpec{Type: operator.ServiceTypeClusterIP, Ports: []operator.ServicePort{{Name: "http", Port: 9090}}},
		Metrics:         &operator.MetricsSpec{Enabled: ptr.To(true)},
		SecurityContext: container,
		Pod:             &operator.PodOptions{SecurityContext: pod},
	}
	if diff := cmp.Diff(wantSpec, internal.Spec); diff != "" {
		t.Fatalf("internal spec (-want +got):\n%s", diff)
	}
	// Each conversion has security contexts of its own.
	other := convert(t, scheme, in, &operator.NginxOperator{})
	other.Spec.SecurityContext.Capabilities.Drop[0] = "NET_RAW"
	*other.Spec.Pod.SecurityContext.RunAsNonRoot = false
	if diff := cmp.Diff(wantSpec, internal.Spec); diff != "" {
		t.Fatalf("internal spec after another conversion's was changed (-want +got):\n%s", diff)
	}

	// The stored form, read back as v1alpha2 and defaulted, converts back without an annotation.
	stored := convert(t, scheme, internal, &v1alpha2.NginxOperator{})
	scheme.Default(stored)
	back := convert(t, scheme, convert(t, scheme, stored, &operator.NginxOperator{}), &v1alpha1.NginxOperator{})
	if len(back.Annotations) != 0 {
		t.Errorf("plain object gained annotations: %v", back.Annotations)
	}
	if diff := cmp.Diff(in.Spec, back.Spec); diff != "" {
		t.Errorf("v1alpha1 spec after round trip (-want +got):\n%s", diff)
	}
}

// A client that reads through v1alpha1, edits what it knows and writes back must not
// erase what only v1alpha2 can express.
func TestReadModifyWriteThroughV1alpha1KeepsV1alpha2Fields(t *testing.T) {
	scheme := newScheme()
	rich := &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{"team": "edge"}},
		Spec: v1alpha2.NginxOperatorSpec{
			Image: "nginx:1.25",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {Name: "https", ContainerPort: 443, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "A", Value: "b"}},
			Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
			Service: &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeNodePort, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80, NodePort: ptr.To[int32](30080)}, {Name: "https", Port: 443}},
				Labels: map[string]string{"exposed": "yes"}, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal},
			QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400},
			// The operand's options: configuration, files, TLS, probes, security, placement.
			Config:          &v1alpha2.ConfigSource{Inline: "events {}\nhttp {}\n"},
			Files:           []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}},
			TLS:             []v1alpha2.TLSSecret{{SecretName: "web-tls"}},
			HealthcheckPath: "/healthz",
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)},
			Pod: &v1alpha2.PodOptions{NodeSelector: map[string]string{"disk": "ssd"}, PriorityClassName: "high",
				Tolerations:     []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}},
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}},
			PodDisruptionBudget: &v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		},
		Status: v1alpha2.NginxOperatorStatus{ObservedGeneration: 4, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, Selector: "app=web", RealQPS: ptr.To[int64](2400)},
	}
	inputAnnotations := map[string]string{"team": "edge"}

	// The v1alpha1 form travels to the client and back in each wire format the server speaks.
	for _, wire := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(wire, func(t *testing.T) {
			old := convert(t, scheme, rich, &operator.NginxOperator{})
			v1 := overTheWire(t, scheme, wire, convert(t, scheme, old, &v1alpha1.NginxOperator{}))
			if _, found := v1.Annotations[operator.PreservedFieldsAnnotation]; !found {
				t.Fatalf("v1alpha1 form lacks %s: %v", operator.PreservedFieldsAnnotation, v1.Annotations)
			}
			if diff := cmp.Diff(inputAnnotations, old.Annotations); diff != "" {
				t.Fatalf("conversion mutated the input annotations (-want +got):\n%s", diff)
			}
			if *v1.Spec.Port != 80 || v1.Spec.Replicas != nil {
				t.Fatalf("v1alpha1 spec = %+v, want port 80 and no replicas in QPS mode", v1.Spec)
			}

			// The client edits the fields v1alpha1 knows and sends them back; decoding defaults
			// it as the server would.
			v1.Spec.Port = ptr.To[int32](8080)
			v1.Spec.ForceRedploy = "2026-11-21"
			v1 = overTheWire(t, scheme, wire, v1)
			scheme.Default(v1)
			if v1.Spec.Replicas != nil {
				t.Fatalf("v1alpha1 defaulting set replicas on a QPS-mode object")
			}

			updated := convert(t, scheme, convert(t, scheme, v1, &operator.NginxOperator{}), &v1alpha2.NginxOperator{})
			want := rich.DeepCopy()
			// v1alpha1's port is the Service's first port; nginx keeps listening on 80.
			want.Spec.Service.Ports[0].Port = 8080
			want.Spec.ForceRedeploy = "2026-11-21"
			if diff := cmp.Diff(want.Spec, updated.Spec); diff != "" {
				t.Errorf("spec after write through v1alpha1 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Status, updated.Status); diff != "" {
				t.Errorf("status after write through v1alpha1 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(inputAnnotations, updated.Annotations); diff != "" {
				t.Errorf("annotations after write through v1alpha1 (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCorruptPreservedAnnotationIsLeftToValidation: conversion keeps an annotation it
// cannot parse (validation refuses it with 422; a conversion error would be a 500 under
// server-side apply), and never shows it to v1alpha1 readers.
func TestCorruptPreservedAnnotationIsLeftToValidation(t *testing.T) {
	scheme := newScheme()
	in := &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{
		Name: "web", Annotations: map[string]string{operator.PreservedFieldsAnnotation: "{not json", "keep": "me"},
	}}
	internal := &operator.NginxOperator{}
	if err := scheme.Convert(in, internal, nil); err != nil {
		t.Fatalf("conversion failed: %v", err)
	}
	if got := internal.Annotations[operator.PreservedFieldsAnnotation]; got != "{not json" {
		t.Fatalf("annotation %q, want the corrupt value kept for validation to refuse", got)
	}
	back := &v1alpha1.NginxOperator{}
	if err := scheme.Convert(internal, back, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"keep": "me"}, back.Annotations); diff != "" {
		t.Errorf("annotations read through v1alpha1 (-want +got):\n%s", diff)
	}
}

func TestV1alpha1Defaults(t *testing.T) {
	scheme := newScheme()
	obj := &v1alpha1.NginxOperator{}
	scheme.Default(obj)
	if *obj.Spec.Port != 80 || *obj.Spec.Replicas != 1 {
		t.Errorf("defaults = %+v, want port 80 and replicas 1", obj.Spec)
	}
}

// Once the controller has written status, the annotation holds only status, so a
// v1alpha1 port edit still moves the Service port like on a plain object (and nginx
// stays on 8080).
func TestPortEditWithStatusMovesServicePort(t *testing.T) {
	scheme := newScheme()
	in := &v1alpha1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec:       v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](8080), Replicas: ptr.To[int32](1)},
	}
	internal := convert(t, scheme, in, &operator.NginxOperator{})
	internal.Status = operator.NginxOperatorStatus{ObservedGeneration: 1, Selector: "app=web"}
	v1 := convert(t, scheme, internal, &v1alpha1.NginxOperator{})
	v1.Spec.Port = ptr.To[int32](9090)
	back := convert(t, scheme, v1, &operator.NginxOperator{})
	if back.Spec.Ports[0].ContainerPort != 8080 || back.Spec.Service.Ports[0].Port != 9090 || back.Status.Selector != "app=web" {
		t.Errorf("spec=%+v service=%+v status=%+v", back.Spec.Ports, back.Spec.Service.Ports, back.Status)
	}
}

func TestV1alpha1ReplicasSwitchOffQPS(t *testing.T) {
	scheme := newScheme()
	qps := &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec:       v1alpha2.NginxOperatorSpec{QPS: &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}},
	}
	scheme.Default(qps)
	v1 := convert(t, scheme, convert(t, scheme, qps, &operator.NginxOperator{}), &v1alpha1.NginxOperator{})
	v1.Spec.Replicas = ptr.To[int32](5)
	back := convert(t, scheme, v1, &operator.NginxOperator{})
	if back.Spec.QPS != nil || *back.Spec.Replicas != 5 {
		t.Errorf("spec = %+v", back.Spec)
	}
}

// TestV1alpha1IsTheV1alpha2Defaults: a v1alpha1 object is what a v1alpha2 object created
// with the same replicas and nothing else becomes, so that one reads back through v1alpha1
// as {port: 80, replicas} without an annotation, and a v1alpha2 object whose Service
// listens elsewhere reads as that port.
func TestV1alpha1IsTheV1alpha2Defaults(t *testing.T) {
	scheme := newScheme()
	for _, replicas := range []int32{0, 1, 3} {
		created := &v1alpha2.NginxOperator{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
			Spec:       v1alpha2.NginxOperatorSpec{Replicas: ptr.To(replicas)},
		}
		scheme.Default(created)
		v1 := convert(t, scheme, convert(t, scheme, created, &operator.NginxOperator{}), &v1alpha1.NginxOperator{})
		if len(v1.Annotations) != 0 {
			t.Errorf("replicas %d: v1alpha1 form of a defaulted v1alpha2 object has annotations %v", replicas, v1.Annotations)
		}
		if diff := cmp.Diff(v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](80), Replicas: ptr.To(replicas)}, v1.Spec); diff != "" {
			t.Errorf("replicas %d: v1alpha1 spec (-want +got):\n%s", replicas, diff)
		}

		// The other way: the same v1alpha1 object, stored, is that v1alpha2 object.
		stored := convert(t, scheme, convert(t, scheme, v1, &operator.NginxOperator{}), &v1alpha2.NginxOperator{})
		if diff := cmp.Diff(created.Spec, stored.Spec); diff != "" {
			t.Errorf("replicas %d: v1alpha2 form of the v1alpha1 object (-defaulted v1alpha2 +converted):\n%s", replicas, diff)
		}
	}

	onPort := &v1alpha2.NginxOperator{Spec: v1alpha2.NginxOperatorSpec{Service: &v1alpha2.ServiceSpec{Ports: []v1alpha2.ServicePort{{Name: "http", Port: 9090}}}}}
	scheme.Default(onPort)
	v1 := convert(t, scheme, convert(t, scheme, onPort, &operator.NginxOperator{}), &v1alpha1.NginxOperator{})
	if *v1.Spec.Port != 9090 || len(v1.Annotations) != 0 {
		t.Errorf("v1alpha1 form of the default image behind a Service on 9090: %+v, annotations %v", v1.Spec, v1.Annotations)
	}
}

// TestObjectsStoredWithStockNginx: objects v1alpha1 created up to release 0.1 are stored
// as stock nginx as root on 80. They differ from what v1alpha1 means now, so their
// v1alpha1 form carries the difference in the annotation, and a read-modify-write
// through v1alpha1 keeps them as they are; an edit of port moves the Service port alone.
// Once the image and ports are dropped through v1alpha2, they are plain v1alpha1 objects.
func TestObjectsStoredWithStockNginx(t *testing.T) {
	scheme := newScheme()
	for _, wire := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(wire, func(t *testing.T) {
			stored := &v1alpha2.NginxOperator{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
				Spec: v1alpha2.NginxOperatorSpec{
					Image:    stockImage,
					Replicas: ptr.To[int32](2),
					Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
					Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
					Metrics:  &v1alpha2.MetricsSpec{Enabled: ptr.To(true)},
				},
			}
			scheme.Default(stored) // as read from storage: nothing to fill
			v1 := overTheWire(t, scheme, wire, convert(t, scheme, convert(t, scheme, stored, &operator.NginxOperator{}), &v1alpha1.NginxOperator{}))
			if diff := cmp.Diff(v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](80), Replicas: ptr.To[int32](2)}, v1.Spec); diff != "" {
				t.Errorf("v1alpha1 spec (-want +got):\n%s", diff)
			}
			if preserved := v1.Annotations[operator.PreservedFieldsAnnotation]; !strings.Contains(preserved, `"image":"nginx:1.27.4"`) {
				t.Fatalf("v1alpha1 form's %s = %q, want the stock image in it", operator.PreservedFieldsAnnotation, preserved)
			}

			// Written back unchanged: the same object.
			unchanged := overTheWire(t, scheme, wire, v1.DeepCopy())
			scheme.Default(unchanged)
			back := convert(t, scheme, convert(t, scheme, unchanged, &operator.NginxOperator{}), &v1alpha2.NginxOperator{})
			if diff := cmp.Diff(stored.Spec, back.Spec); diff != "" {
				t.Errorf("spec after an unchanged write through v1alpha1 (-want +got):\n%s", diff)
			}
			if len(back.Annotations) != 0 {
				t.Errorf("annotations after a write through v1alpha1: %v", back.Annotations)
			}

			// port edited: the Service moves, nginx stays where stock nginx listens.
			edited := v1.DeepCopy()
			edited.Spec.Port = ptr.To[int32](8000)
			edited = overTheWire(t, scheme, wire, edited)
			scheme.Default(edited)
			back = convert(t, scheme, convert(t, scheme, edited, &operator.NginxOperator{}), &v1alpha2.NginxOperator{})
			want := stored.DeepCopy()
			want.Spec.Service.Ports[0].Port = 8000
			if diff := cmp.Diff(want.Spec, back.Spec); diff != "" {
				t.Errorf("spec after a port edit through v1alpha1 (-want +got):\n%s", diff)
			}
		})
	}

	// The move the upgrade notes give: drop image and ports through v1alpha2
	// (kubectl patch --type=merge -p '{"spec":{"image":null,"ports":null}}').
	moved := &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1alpha2.NginxOperatorSpec{
			Replicas: ptr.To[int32](2),
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 8000}}},
			Metrics:  &v1alpha2.MetricsSpec{Enabled: ptr.To(true)},
		},
	}
	scheme.Default(moved)
	v1 := convert(t, scheme, convert(t, scheme, moved, &operator.NginxOperator{}), &v1alpha1.NginxOperator{})
	if diff := cmp.Diff(v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](8000), Replicas: ptr.To[int32](2)}, v1.Spec); diff != "" {
		t.Errorf("v1alpha1 spec after the move (-want +got):\n%s", diff)
	}
	if len(v1.Annotations) != 0 {
		t.Errorf("v1alpha1 form after the move has annotations %v", v1.Annotations)
	}
}
