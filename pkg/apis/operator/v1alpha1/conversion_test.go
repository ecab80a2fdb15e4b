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

func TestPlainV1alpha1NeedsNoAnnotation(t *testing.T) {
	scheme := newScheme()
	in := &v1alpha1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec:       v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](8080), Replicas: ptr.To[int32](2), ForceRedploy: "a"},
	}
	internal := convert(t, scheme, in, &operator.NginxOperator{})
	wantSpec := operator.NginxOperatorSpec{
		Image:         v1alpha2.LegacyImage,
		Replicas:      ptr.To[int32](2),
		ForceRedeploy: "a",
		Ports:         []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Service:       &operator.ServiceSpec{Type: operator.ServiceTypeClusterIP, Ports: []operator.ServicePort{{Name: "http", Port: 8080}}},
		Metrics:       &operator.MetricsSpec{Enabled: ptr.To(true)},
	}
	if diff := cmp.Diff(wantSpec, internal.Spec); diff != "" {
		t.Fatalf("internal spec (-want +got):\n%s", diff)
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
			want.Spec.Ports[0].ContainerPort = 8080
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
// v1alpha1 port edit still moves the Service port like on a plain object.
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
	if back.Spec.Ports[0].ContainerPort != 9090 || back.Spec.Service.Ports[0].Port != 9090 || back.Status.Selector != "app=web" {
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
