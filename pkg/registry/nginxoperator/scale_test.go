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

package nginxoperator

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

func TestScaleFromNginxOperator(t *testing.T) {
	o := sample()
	s := scaleFromNginxOperator(o)
	if s.Spec.Replicas != 2 || s.Status.Replicas != 2 || s.Status.Selector != "app=web" || s.ResourceVersion != "7" {
		t.Errorf("scale = %+v", s)
	}
	o.Spec.Replicas = nil
	o.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}
	if got := scaleFromNginxOperator(o).Spec.Replicas; got != 3 {
		t.Errorf("QPS-mode scale replicas = %d, want 3", got)
	}
	// Before the controller has written any status, the selector follows from the name.
	o.Status = operator.NginxOperatorStatus{}
	if got, want := scaleFromNginxOperator(o).Status.Selector, "app.kubernetes.io/instance=web,app.kubernetes.io/name=nginx"; got != want {
		t.Errorf("selector without status = %q, want %q", got, want)
	}
}

func TestValidateScale(t *testing.T) {
	qps := sample()
	qps.Spec.Replicas = nil
	qps.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}
	cases := []struct {
		name  string
		scale autoscalingv1.Scale
		obj   *operator.NginxOperator
		want  string
	}{
		{"scale up", autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 4}}, sample(), ""},
		{"scale to zero", autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 0}}, sample(), ""},
		{"negative", autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: -1}}, sample(), "spec.replicas"},
		{"other name", autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}, sample(), "metadata.name"},
		{"qps mode refuses a change", autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}, qps, "spec.replicas"},
		{"qps mode accepts the current value", autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}, qps, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateScale(&tc.scale, tc.obj)
			got := ""
			if len(errs) > 0 {
				got = errs[0].Field
			}
			if got != tc.want || len(errs) > 1 {
				t.Errorf("errors = %v, want one on %q", errs, tc.want)
			}
		})
	}
}
