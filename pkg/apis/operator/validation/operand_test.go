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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

func TestValidateOperandOptions(t *testing.T) {
	pod := func(o *operator.NginxOperator) *operator.PodOptions {
		if o.Spec.Pod == nil {
			o.Spec.Pod = &operator.PodOptions{}
		}
		return o.Spec.Pod
	}
	cases := []struct {
		name   string
		mutate func(o *operator.NginxOperator)
		want   []string
	}{
		{name: "everything valid", mutate: func(o *operator.NginxOperator) {
			o.Spec.Config = &operator.ConfigSource{ConfigMapKeyRef: &operator.ConfigMapKeyReference{Name: "shared", Key: "nginx.conf"}}
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}, {ConfigMapName: "conf", MountPath: "/etc/nginx/conf.d"}}
			o.Spec.TLS = []operator.TLSSecret{{SecretName: "web-tls"}}
			o.Spec.HealthcheckPath = "/healthz?full=1"
			o.Spec.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), RunAsUser: ptr.To[int64](101)}
			o.Spec.PodDisruptionBudget = &operator.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("25%"))}
			*pod(o) = operator.PodOptions{
				Labels: map[string]string{"team": "web"}, Annotations: map[string]string{"a": "b"}, NodeSelector: map[string]string{"disk": "ssd"},
				Tolerations:               []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}, {Operator: corev1.TolerationOpExists}},
				Affinity:                  &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: ptr.To[int32](2)}},
				PriorityClassName:         "high", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}, ServiceAccountName: "web",
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			}
			o.Spec.Service.Type = operator.ServiceTypeLoadBalancer
			o.Spec.Service.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			o.Spec.Service.LoadBalancerSourceRanges = []string{"10.0.0.0/8", "2001:db8::/32"}
			o.Spec.Service.Labels = map[string]string{"exposed": "yes"}
		}},
		{name: "config with neither source", mutate: func(o *operator.NginxOperator) { o.Spec.Config = &operator.ConfigSource{} },
			want: []string{"FieldValueRequired spec.config"}},
		{name: "config with both sources", mutate: func(o *operator.NginxOperator) {
			o.Spec.Config = &operator.ConfigSource{Inline: "x", ConfigMapKeyRef: &operator.ConfigMapKeyReference{Name: "a", Key: "b"}}
		}, want: []string{"FieldValueForbidden spec.config.configMapKeyRef"}},
		{name: "inline config too long", mutate: func(o *operator.NginxOperator) {
			o.Spec.Config = &operator.ConfigSource{Inline: strings.Repeat("#", MaxInlineConfigBytes+1)}
		}, want: []string{"FieldValueTooLong spec.config.inline"}},
		{name: "config reference invalid", mutate: func(o *operator.NginxOperator) {
			o.Spec.Config = &operator.ConfigSource{ConfigMapKeyRef: &operator.ConfigMapKeyReference{Name: "Bad_Name", Key: "a/b"}}
		}, want: []string{"FieldValueInvalid spec.config.configMapKeyRef.name", "FieldValueInvalid spec.config.configMapKeyRef.key"}},
		{name: "files: relative, duplicate and reserved paths", mutate: func(o *operator.NginxOperator) {
			o.Spec.Files = []operator.ConfigMapFiles{
				{ConfigMapName: "a", MountPath: "html"}, {ConfigMapName: "b", MountPath: "/srv/"}, {ConfigMapName: "c", MountPath: "/etc/nginx/nginx.conf"},
				{ConfigMapName: "d", MountPath: "/etc/nginx/tls/x"}, {ConfigMapName: "e", MountPath: "/srv"}, {ConfigMapName: "f", MountPath: "/srv"}, {MountPath: "/x"},
			}
		}, want: []string{"FieldValueInvalid spec.files[0].mountPath", "FieldValueInvalid spec.files[1].mountPath", "FieldValueInvalid spec.files[2].mountPath",
			"FieldValueInvalid spec.files[3].mountPath", "FieldValueDuplicate spec.files[5].mountPath", "FieldValueRequired spec.files[6].configMapName"}},
		{name: "too many files", mutate: func(o *operator.NginxOperator) { o.Spec.Files = make([]operator.ConfigMapFiles, MaxMounts+1) },
			want: []string{"FieldValueTooMany spec.files"}},
		{name: "tls duplicate and invalid", mutate: func(o *operator.NginxOperator) {
			o.Spec.TLS = []operator.TLSSecret{{SecretName: "a"}, {SecretName: "a"}, {SecretName: "A"}}
		}, want: []string{"FieldValueDuplicate spec.tls[1].secretName", "FieldValueInvalid spec.tls[2].secretName"}},
		{name: "healthcheck path relative", mutate: func(o *operator.NginxOperator) { o.Spec.HealthcheckPath = "healthz" },
			want: []string{"FieldValueInvalid spec.healthcheckPath"}},
		{name: "healthcheck path with a space", mutate: func(o *operator.NginxOperator) { o.Spec.HealthcheckPath = "/a b" },
			want: []string{"FieldValueInvalid spec.healthcheckPath"}},
		{name: "healthcheck without a TCP port", mutate: func(o *operator.NginxOperator) {
			o.Spec.HealthcheckPath = "/"
			o.Spec.Ports = []corev1.ContainerPort{{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
			o.Spec.Service.Ports = []operator.ServicePort{{Name: "dns", Port: 53}}
		}, want: []string{"FieldValueForbidden spec.healthcheckPath"}},
		{name: "pdb with both and a bad percentage", mutate: func(o *operator.NginxOperator) {
			o.Spec.PodDisruptionBudget = &operator.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("120%")), MaxUnavailable: ptr.To(intstr.FromInt32(-1))}
		}, want: []string{"FieldValueForbidden spec.podDisruptionBudget.maxUnavailable", "FieldValueInvalid spec.podDisruptionBudget.minAvailable",
			"FieldValueInvalid spec.podDisruptionBudget.maxUnavailable"}},
		{name: "pdb empty", mutate: func(o *operator.NginxOperator) { o.Spec.PodDisruptionBudget = &operator.PodDisruptionBudgetSpec{} },
			want: []string{"FieldValueRequired spec.podDisruptionBudget"}},
		{name: "pod labels may not replace the controller's", mutate: func(o *operator.NginxOperator) {
			pod(o).Labels = map[string]string{"app.kubernetes.io/instance": "other", "bad key!": "x"}
		}, want: []string{"FieldValueInvalid spec.pod.labels", "FieldValueForbidden spec.pod.labels[app.kubernetes.io/instance]"}},
		{name: "procMount and AppArmor profiles", mutate: func(o *operator.NginxOperator) {
			o.Spec.SecurityContext = &corev1.SecurityContext{ProcMount: ptr.To[corev1.ProcMountType]("Sometimes"), AppArmorProfile: &corev1.AppArmorProfile{Type: "Loose"}}
			pod(o).SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost}}
		}, want: []string{"FieldValueNotSupported spec.securityContext.appArmorProfile.type", "FieldValueNotSupported spec.securityContext.procMount",
			"FieldValueRequired spec.pod.securityContext.appArmorProfile.localhostProfile"}},
		{name: "pod annotations may not set the controller's", mutate: func(o *operator.NginxOperator) {
			pod(o).Annotations = map[string]string{"operator.example.com/content-sync": "x", "prometheus.io/scrape": "true"}
		}, want: []string{"FieldValueForbidden spec.pod.annotations[operator.example.com/content-sync]"}},
		{name: "tolerations", mutate: func(o *operator.NginxOperator) {
			pod(o).Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}, {Key: "a", Operator: "Maybe"},
				{Key: "b", Operator: corev1.TolerationOpExists, Value: "v"}, {Key: "c", Effect: "Sometimes"}, {Key: "d", TolerationSeconds: ptr.To[int64](5)}}
		}, want: []string{"FieldValueInvalid spec.pod.tolerations[0].operator", "FieldValueNotSupported spec.pod.tolerations[1].operator",
			"FieldValueInvalid spec.pod.tolerations[2].value", "FieldValueNotSupported spec.pod.tolerations[3].effect", "FieldValueInvalid spec.pod.tolerations[4].effect"}},
		{name: "affinity", mutate: func(o *operator.NginxOperator) {
			pod(o).Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
					{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn}, {Key: "x", Operator: "Near"}}}}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 0}}},
			}
		}, want: []string{"FieldValueRequired spec.pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values",
			"FieldValueNotSupported spec.pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].operator",
			"FieldValueInvalid spec.pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
			"FieldValueRequired spec.pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey"}},
		{name: "topology spread", mutate: func(o *operator.NginxOperator) {
			pod(o).TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 0, WhenUnsatisfiable: "Never", MinDomains: ptr.To[int32](1)}}
		}, want: []string{"FieldValueInvalid spec.pod.topologySpreadConstraints[0].maxSkew", "FieldValueRequired spec.pod.topologySpreadConstraints[0].topologyKey",
			"FieldValueNotSupported spec.pod.topologySpreadConstraints[0].whenUnsatisfiable", "FieldValueInvalid spec.pod.topologySpreadConstraints[0].minDomains"}},
		{name: "names of the pod's references", mutate: func(o *operator.NginxOperator) {
			pod(o).PriorityClassName, pod(o).ServiceAccountName = "High", "web_sa"
			pod(o).ImagePullSecrets = []corev1.LocalObjectReference{{}}
		}, want: []string{"FieldValueInvalid spec.pod.priorityClassName", "FieldValueRequired spec.pod.imagePullSecrets[0].name", "FieldValueInvalid spec.pod.serviceAccountName"}},
		{name: "security contexts", mutate: func(o *operator.NginxOperator) {
			pod(o).SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0), FSGroup: ptr.To[int64](-1),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}
			o.Spec.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
				SeccompProfile: &corev1.SeccompProfile{Type: "Strict"}}
		}, want: []string{"FieldValueNotSupported spec.securityContext.seccompProfile.type", "FieldValueInvalid spec.securityContext.allowPrivilegeEscalation",
			"FieldValueInvalid spec.pod.securityContext.runAsUser", "FieldValueRequired spec.pod.securityContext.seccompProfile.localhostProfile",
			"FieldValueInvalid spec.pod.securityContext.fsGroup"}},
		{name: "service options for the wrong type", mutate: func(o *operator.NginxOperator) {
			o.Spec.Service.Type = operator.ServiceTypeClusterIP
			for i := range o.Spec.Service.Ports {
				o.Spec.Service.Ports[i].NodePort = nil
			}
			o.Spec.Service.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			o.Spec.Service.LoadBalancerSourceRanges = []string{"10.0.0.0/33"}
			o.Spec.Service.Labels = map[string]string{"app.kubernetes.io/managed-by": "me"}
		}, want: []string{"FieldValueForbidden spec.service.labels[app.kubernetes.io/managed-by]", "FieldValueForbidden spec.service.externalTrafficPolicy",
			"FieldValueForbidden spec.service.loadBalancerSourceRanges", "FieldValueInvalid spec.service.loadBalancerSourceRanges[0]"}},
		{name: "unknown traffic policy", mutate: func(o *operator.NginxOperator) {
			o.Spec.Service.Type = operator.ServiceTypeNodePort
			o.Spec.Service.ExternalTrafficPolicy = "Global"
		}, want: []string{"FieldValueNotSupported spec.service.externalTrafficPolicy"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			tc.mutate(o)
			assertErrors(t, ValidateNginxOperator(o), tc.want)
		})
	}
}
