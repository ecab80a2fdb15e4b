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

package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

func TestValidateMetrics(t *testing.T) {
	on := func(o *operator.NginxOperator) { o.Spec.Metrics = &operator.MetricsSpec{Enabled: ptr.To(true)} }
	exporterPort := func(o *operator.NginxOperator) {
		o.Spec.Ports = append(o.Spec.Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9113, Protocol: corev1.ProtocolTCP})
		o.Spec.Service.Ports = append(o.Spec.Service.Ports, operator.ServicePort{Name: "metrics", Port: 9113})
	}
	for _, tc := range []struct {
		name   string
		mutate func(o *operator.NginxOperator)
		want   []string
	}{
		{name: "on", mutate: on},
		{name: "nginx's own exporter port with metrics off", mutate: func(o *operator.NginxOperator) {
			exporterPort(o)
			o.Spec.Metrics = &operator.MetricsSpec{Enabled: ptr.To(false)}
		}},
		{name: "nginx's own exporter port with metrics on", mutate: func(o *operator.NginxOperator) { on(o); exporterPort(o) },
			want: []string{"FieldValueInvalid spec.ports[2].name", "FieldValueInvalid spec.ports[2].containerPort"}},
		{name: "a file mount over the status server", mutate: func(o *operator.NginxOperator) {
			on(o)
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "a", MountPath: "/etc/nginx/nginx-operator"}, {ConfigMapName: "b", MountPath: "/etc/nginx/nginx-operator/x"}, {ConfigMapName: "c", MountPath: "/etc/nginx/nginx-operator2"}}
		}, want: []string{"FieldValueInvalid spec.files[0].mountPath", "FieldValueInvalid spec.files[1].mountPath"}},
		{name: "the same mount with metrics off", mutate: func(o *operator.NginxOperator) {
			o.Spec.Metrics = &operator.MetricsSpec{Enabled: ptr.To(false)}
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "a", MountPath: "/etc/nginx/nginx-operator"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			tc.mutate(o)
			assertErrors(t, ValidateNginxOperator(o), tc.want)
		})
	}
}
