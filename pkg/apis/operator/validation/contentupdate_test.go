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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

func TestValidateContentUpdate(t *testing.T) {
	reload := func(o *operator.NginxOperator) {
		o.Spec.ContentUpdate = operator.ContentUpdateReload
		o.Spec.Metrics = &operator.MetricsSpec{Enabled: ptr.To(true)}
		o.Spec.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](101)}
	}
	for _, tc := range []struct {
		name   string
		mutate func(o *operator.NginxOperator)
		want   []string
	}{
		{name: "reload with metrics on and nginx's user named", mutate: reload},
		{name: "reload with the default image's known user", mutate: func(o *operator.NginxOperator) {
			reload(o)
			o.Spec.SecurityContext = nil
			o.Spec.Image = "nginxinc/nginx-unprivileged:1.27.4"
		}},
		{name: "reload with the pod's user", mutate: func(o *operator.NginxOperator) {
			reload(o)
			o.Spec.SecurityContext = nil
			o.Spec.Pod = &operator.PodOptions{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}}
		}},
		{name: "rollout needs nothing", mutate: func(o *operator.NginxOperator) {
			o.Spec.ContentUpdate = operator.ContentUpdateRollout
			o.Spec.Metrics = &operator.MetricsSpec{Enabled: ptr.To(false)}
		}},
		{name: "an unknown policy", mutate: func(o *operator.NginxOperator) { o.Spec.ContentUpdate = "Restart" },
			want: []string{"FieldValueNotSupported spec.contentUpdate"}},
		{name: "reload without the sidecar", mutate: func(o *operator.NginxOperator) {
			reload(o)
			o.Spec.Metrics.Enabled = ptr.To(false)
		}, want: []string{"FieldValueInvalid spec.contentUpdate"}},
		{name: "reload without nginx's user", mutate: func(o *operator.NginxOperator) {
			reload(o)
			o.Spec.SecurityContext = nil
		}, want: []string{"FieldValueInvalid spec.contentUpdate"}},
		{name: "reload as root: the container's user wins over the pod's", mutate: func(o *operator.NginxOperator) {
			reload(o)
			o.Spec.SecurityContext.RunAsUser = ptr.To[int64](0)
			o.Spec.Pod = &operator.PodOptions{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}}
		}, want: []string{"FieldValueInvalid spec.contentUpdate"}},
		{name: "files and scratch over what reload mounts", mutate: func(o *operator.NginxOperator) {
			reload(o)
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "a", MountPath: "/etc/nginx/nginx-operator-config"}}
			o.Spec.Scratch = []operator.ScratchVolume{{Name: "log", MountPath: "/var/run/nginx-operator-log", SizeLimit: resource.MustParse("1Mi")}}
		}, want: []string{"FieldValueInvalid spec.files[0].mountPath", "FieldValueInvalid spec.scratch[0].mountPath"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			tc.mutate(o)
			assertErrors(t, ValidateNginxOperator(o), tc.want)
		})
	}
}
