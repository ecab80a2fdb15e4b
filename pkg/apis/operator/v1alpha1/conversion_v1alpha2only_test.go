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

// TestV1alpha2OnlyFieldsSurviveV1alpha1: a field v1alpha1 cannot express is kept in the
// preserved-fields annotation, also when it is the only such field, and comes back
// unchanged through a read-modify-write through v1alpha1 in either wire format; the same
// object without it (metrics on, the default and what a v1alpha1 object means; no
// scratch volumes, contentUpdate unset) needs no annotation.
func TestV1alpha2OnlyFieldsSurviveV1alpha1(t *testing.T) {
	plain := func() *v1alpha2.NginxOperator {
		container, pod := restricted()
		return &v1alpha2.NginxOperator{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
			Spec: v1alpha2.NginxOperatorSpec{
				Image:           "nginxinc/nginx-unprivileged:1.27.4",
				Replicas:        ptr.To[int32](2),
				Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Service:         &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
				Metrics:         &v1alpha2.MetricsSpec{Enabled: ptr.To(true)},
				SecurityContext: container,
				Pod:             &v1alpha2.PodOptions{SecurityContext: pod},
			},
		}
	}
	for _, tc := range []struct {
		field     string
		set       func(*v1alpha2.NginxOperatorSpec)
		preserved []string // what the annotation must hold
	}{
		{"metrics off", func(s *v1alpha2.NginxOperatorSpec) { s.Metrics.Enabled = ptr.To(false) }, []string{`"metrics":{"enabled":false}`}},
		{"scratch", func(s *v1alpha2.NginxOperatorSpec) {
			s.Scratch = []v1alpha2.ScratchVolume{
				{Name: "cache", MountPath: "/var/cache/nginx/proxy", SizeLimit: resource.MustParse("10Gi")},
				{Name: "tmp", MountPath: "/tmp", Medium: corev1.StorageMediumMemory, SizeLimit: resource.MustParse("64Mi")},
			}
		}, []string{`"scratch"`, `"10Gi"`}},
		{"reload in place", func(s *v1alpha2.NginxOperatorSpec) {
			s.ContentUpdate = v1alpha2.ContentUpdateReload
			s.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](101)}
		}, []string{`"contentUpdate":"Reload"`, `"runAsUser":101`}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			scheme := newScheme()
			stored := plain()
			tc.set(&stored.Spec)
			for _, wire := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
				t.Run(wire, func(t *testing.T) {
					internal := convert(t, scheme, stored, &operator.NginxOperator{})
					v1 := overTheWire(t, scheme, wire, convert(t, scheme, internal, &v1alpha1.NginxOperator{}))
					preserved := v1.Annotations[operator.PreservedFieldsAnnotation]
					for _, want := range tc.preserved {
						if !strings.Contains(preserved, want) {
							t.Fatalf("v1alpha1 form's %s = %q, want %s in it", operator.PreservedFieldsAnnotation, preserved, want)
						}
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
		})
	}

	scheme := newScheme()
	if v1 := convert(t, scheme, convert(t, scheme, plain(), &operator.NginxOperator{}), &v1alpha1.NginxOperator{}); len(v1.Annotations) != 0 {
		t.Errorf("the plain object's v1alpha1 form has annotations %v", v1.Annotations)
	}
}
