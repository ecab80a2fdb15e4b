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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func TestDeploymentMountsConfigFilesAndTLS(t *testing.T) {
	no := sample("web")
	no.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\nhttp {}\n"}
	no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}}
	no.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "web-tls"}, {SecretName: "api-tls"}}
	d, err := Deployment(no, "abc123")
	if err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Spec
	got := map[string]string{}
	for _, v := range pod.Volumes {
		switch {
		case v.ConfigMap != nil:
			got[*v.Name] = "configMap " + *v.ConfigMap.Name
			if len(v.ConfigMap.Items) > 0 {
				got[*v.Name] += " " + *v.ConfigMap.Items[0].Key + "->" + *v.ConfigMap.Items[0].Path
			}
		case v.Secret != nil:
			got[*v.Name] = "secret " + *v.Secret.SecretName
		}
	}
	want := map[string]string{
		"config":  "configMap web-nginx-conf nginx.conf->nginx.conf",
		"files-0": "configMap site",
		"tls-0":   "secret web-tls",
		"tls-1":   "secret api-tls",
	}
	if mustJSON(got) != mustJSON(want) {
		t.Errorf("volumes = %v, want %v", got, want)
	}
	mounts := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		mounts[*m.MountPath] = *m.Name + " readOnly=" + mustJSON(*m.ReadOnly)
		if m.SubPath != nil {
			mounts[*m.MountPath] += " subPath=" + *m.SubPath
		}
	}
	wantMounts := map[string]string{
		"/etc/nginx/nginx.conf":  "config readOnly=true subPath=nginx.conf",
		"/usr/share/nginx/html":  "files-0 readOnly=true",
		"/etc/nginx/tls/web-tls": "tls-0 readOnly=true",
		"/etc/nginx/tls/api-tls": "tls-1 readOnly=true",
	}
	if mustJSON(mounts) != mustJSON(wantMounts) {
		t.Errorf("mounts = %v, want %v", mounts, wantMounts)
	}
	if d.Spec.Template.Annotations[ContentHashAnnotation] != "abc123" {
		t.Errorf("template annotations = %v, want the content hash", d.Spec.Template.Annotations)
	}

	cm := ConfigMap(no)
	if cm == nil || *cm.Name != "web-nginx-conf" || cm.Data["nginx.conf"] != no.Spec.Config.Inline || *cm.OwnerReferences[0].UID != no.UID ||
		cm.Labels[ManagedByLabel] != FieldManager {
		t.Errorf("inline config ConfigMap = %s", mustJSON(cm))
	}

	// A ConfigMap of the user's is mounted directly, under its key.
	no.Spec.Config = &v1alpha2.ConfigSource{ConfigMapKeyRef: &v1alpha2.ConfigMapKeyReference{Name: "shared", Key: "main.conf"}}
	d, _ = Deployment(no, "abc123")
	if v := d.Spec.Template.Spec.Volumes[0]; *v.ConfigMap.Name != "shared" || *v.ConfigMap.Items[0].Key != "main.conf" || *v.ConfigMap.Items[0].Path != "nginx.conf" {
		t.Errorf("config volume from a reference = %s", mustJSON(v))
	}
	if ConfigMap(no) != nil {
		t.Error("a referenced configuration needs no ConfigMap of the controller's")
	}
}

func TestDeploymentWithoutNewFieldsIsUnchanged(t *testing.T) {
	// A spec that uses none of the mounts, probes or pod options gets the pod template it
	// had before they existed, but for the restricted security contexts (restricted.go,
	// tested there), so these options roll no NginxOperator's pods on an upgrade.
	d, err := Deployment(sample("web"), "")
	if err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if pod.Volumes != nil || c.VolumeMounts != nil || pod.NodeSelector != nil ||
		pod.Affinity != nil || pod.Tolerations != nil || d.Spec.Template.Annotations != nil {
		t.Errorf("pod template = %s", mustJSON(d.Spec.Template))
	}
	// The default policy, File: nginx's output never reaches the pod's status.
	if c.TerminationMessagePolicy != nil {
		t.Errorf("termination message policy = %s, want the default", *c.TerminationMessagePolicy)
	}
}

func TestDeploymentHealthcheckSecurityAndPlacement(t *testing.T) {
	no := sample("web")
	no.Spec.HealthcheckPath = "/healthz"
	no.Spec.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	no.Spec.Pod = &v1alpha2.PodOptions{
		Labels:                    map[string]string{"team": "web"},
		Annotations:               map[string]string{"prometheus.io/scrape": "true"},
		NodeSelector:              map[string]string{"disk": "ssd"},
		Tolerations:               []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}},
		Affinity:                  &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}},
		PriorityClassName:         "high",
		ImagePullSecrets:          []corev1.LocalObjectReference{{Name: "registry"}},
		ServiceAccountName:        "web",
		SecurityContext:           &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
	}
	d, err := Deployment(no, "")
	if err != nil {
		t.Fatal(err)
	}
	tpl := d.Spec.Template
	pod, c := tpl.Spec, tpl.Spec.Containers[0]
	if *c.ReadinessProbe.HTTPGet.Path != "/healthz" || *c.ReadinessProbe.HTTPGet.Port != intstr.FromString("http") ||
		*c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.TCPSocket != nil {
		t.Errorf("probes = %s %s", mustJSON(c.ReadinessProbe), mustJSON(c.LivenessProbe))
	}
	if *c.SecurityContext.AllowPrivilegeEscalation || c.SecurityContext.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container security context = %s", mustJSON(c.SecurityContext))
	}
	if !*pod.SecurityContext.RunAsNonRoot || *pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context = %s", mustJSON(pod.SecurityContext))
	}
	if tpl.Labels["team"] != "web" || tpl.Labels["app.kubernetes.io/instance"] != "web" || tpl.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("template metadata = %s", mustJSON(tpl.ObjectMetaApplyConfiguration))
	}
	if pod.NodeSelector["disk"] != "ssd" || *pod.Tolerations[0].Key != "dedicated" || *pod.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight != 10 ||
		*pod.PriorityClassName != "high" || *pod.ImagePullSecrets[0].Name != "registry" || *pod.ServiceAccountName != "web" {
		t.Errorf("pod spec = %s", mustJSON(pod))
	}
	// A spread constraint without a selector spreads this NginxOperator's pods.
	if sel := pod.TopologySpreadConstraints[0].LabelSelector; sel == nil || sel.MatchLabels["app.kubernetes.io/instance"] != "web" {
		t.Errorf("topology spread = %s", mustJSON(pod.TopologySpreadConstraints))
	}
}

func TestPodDisruptionBudgetAndServiceOptions(t *testing.T) {
	no := sample("web")
	if PodDisruptionBudget(no) != nil {
		t.Error("a PodDisruptionBudget nobody asked for")
	}
	no.Spec.PodDisruptionBudget = &v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("50%"))}
	pdb := PodDisruptionBudget(no)
	if *pdb.Name != "web" || pdb.Spec.MaxUnavailable.String() != "50%" || pdb.Spec.MinAvailable != nil ||
		pdb.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != "web" || *pdb.OwnerReferences[0].UID != no.UID {
		t.Errorf("PodDisruptionBudget = %s", mustJSON(pdb))
	}

	no.Spec.Service = &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeLoadBalancer, Ports: no.Spec.Service.Ports,
		Labels: map[string]string{"exposed": "yes"}, Annotations: map[string]string{"lb.example.com/internal": "true"},
		ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}
	svc := Service(no)
	if svc.Labels["exposed"] != "yes" || svc.Labels[ManagedByLabel] != FieldManager || svc.Annotations["lb.example.com/internal"] != "true" ||
		*svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal || strings.Join(svc.Spec.LoadBalancerSourceRanges, ",") != "10.0.0.0/8" {
		t.Errorf("Service = %s", mustJSON(svc))
	}
}
