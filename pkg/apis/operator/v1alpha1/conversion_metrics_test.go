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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestMetricsOffSurvivesV1alpha1: metrics switched off, which v1alpha1 cannot express,
// stay off through a read-modify-write through v1alpha1; metrics on (the default, and
// what a v1alpha1 object means) need no annotation.
func TestMetricsOffSurvivesV1alpha1(t *testing.T) {
	scheme := newScheme()
	stored := &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1alpha2.NginxOperatorSpec{
			Image:    v1alpha2.LegacyImage,
			Replicas: ptr.To[int32](2),
			Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Service:  &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			Metrics:  &v1alpha2.MetricsSpec{Enabled: ptr.To(false)},
		},
	}
	for _, wire := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(wire, func(t *testing.T) {
			internal := convert(t, scheme, stored, &operator.NginxOperator{})
			v1 := overTheWire(t, scheme, wire, convert(t, scheme, internal, &v1alpha1.NginxOperator{}))
			if preserved := v1.Annotations[operator.PreservedFieldsAnnotation]; !strings.Contains(preserved, `"metrics":{"enabled":false}`) {
				t.Fatalf("v1alpha1 form's %s = %q, want spec.metrics in it", operator.PreservedFieldsAnnotation, preserved)
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
		})
	}

	on := stored.DeepCopy()
	on.Spec.Metrics.Enabled = ptr.To(true)
	v1 := convert(t, scheme, convert(t, scheme, on, &operator.NginxOperator{}), &v1alpha1.NginxOperator{})
	if len(v1.Annotations) != 0 {
		t.Errorf("an object with metrics on has annotations in v1alpha1: %v", v1.Annotations)
	}
}
