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
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestScratchSurvivesV1alpha1: spec.scratch, which v1alpha1 cannot express, is kept in
// the preserved-fields annotation, also when it is the only such field, and comes back
// unchanged through a read-modify-write in either wire format.
func TestScratchSurvivesV1alpha1(t *testing.T) {
	scheme := newScheme()
	stored := &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1alpha2.NginxOperatorSpec{
			Image:    v1alpha2.LegacyImage,
			Replicas: ptr.To[int32](2),
			Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			Metrics:  &v1alpha2.MetricsSpec{Enabled: ptr.To(true)},
			Scratch: []v1alpha2.ScratchVolume{
				{Name: "cache", MountPath: "/var/cache/nginx/proxy", SizeLimit: resource.MustParse("10Gi")},
				{Name: "tmp", MountPath: "/tmp", Medium: corev1.StorageMediumMemory, SizeLimit: resource.MustParse("64Mi")},
			},
		},
	}
	for _, wire := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(wire, func(t *testing.T) {
			internal := convert(t, scheme, stored, &operator.NginxOperator{})
			v1 := overTheWire(t, scheme, wire, convert(t, scheme, internal, &v1alpha1.NginxOperator{}))
			preserved := v1.Annotations[operator.PreservedFieldsAnnotation]
			if !strings.Contains(preserved, `"scratch"`) || !strings.Contains(preserved, `"10Gi"`) {
				t.Fatalf("v1alpha1 form's %s = %q, want spec.scratch in it", operator.PreservedFieldsAnnotation, preserved)
			}

			v1.Spec.Replicas = ptr.To[int32](3)
			v1 = overTheWire(t, scheme, wire, v1)
			scheme.Default(v1)
			back := convert(t, scheme, convert(t, scheme, v1, &operator.NginxOperator{}), &v1alpha2.NginxOperator{})
			want := stored.DeepCopy()
			want.Spec.Replicas = ptr.To[int32](3)
			if diff := cmp.Diff(want.Spec, back.Spec); diff != "" {
				t.Errorf("spec after a write through v1alpha1 (-want +got):\n%s", diff)
			}
			if len(back.Annotations) != 0 {
				t.Errorf("annotations after a write through v1alpha1: %v", back.Annotations)
			}
		})
	}

	// Without scratch volumes the same object needs no annotation.
	plain := stored.DeepCopy()
	plain.Spec.Scratch = nil
	v1 := convert(t, scheme, convert(t, scheme, plain, &operator.NginxOperator{}), &v1alpha1.NginxOperator{})
	if len(v1.Annotations) != 0 {
		t.Errorf("a plain object's v1alpha1 form has annotations %v", v1.Annotations)
	}
}
