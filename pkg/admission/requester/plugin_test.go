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

package requester

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// grants allows what its set names, as "verb resource[/subresource] [name]", and counts
// the questions.
type grants struct {
	allowed map[string]bool
	asked   []string
}

func (g *grants) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	r := a.GetResource()
	if a.GetAPIGroup() != "" {
		r += "." + a.GetAPIGroup()
	}
	if a.GetSubresource() != "" {
		r += "/" + a.GetSubresource()
	}
	q := strings.TrimSpace(fmt.Sprintf("%s %s %s", a.GetVerb(), r, a.GetName()))
	g.asked = append(g.asked, q)
	if a.GetNamespace() == "team" && a.GetUser().GetName() == "alice" && (g.allowed[q] || g.allowed[a.GetVerb()+" "+r]) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "RBAC: no rule", nil
}

func attributes(obj, old *operator.NginxOperator, op admission.Operation, subresource string) admission.Attributes {
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	return admission.NewAttributesRecord(obj, oldObj, operator.Kind("NginxOperator").WithVersion(""), "team", "web",
		operator.Resource("nginxoperators").WithVersion(""), subresource, op, nil, false, &user.DefaultInfo{Name: "alice"})
}

func nginx(spec operator.NginxOperatorSpec) *operator.NginxOperator {
	return &operator.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: spec}
}

func validate(t *testing.T, g *grants, a admission.Attributes) error {
	t.Helper()
	p := New()
	p.SetUnconditionalAuthorizer(g)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	return p.Validate(context.Background(), a, nil)
}

func TestEveryAskNeedsItsPermission(t *testing.T) {
	cases := []struct {
		name string
		spec operator.NginxOperatorSpec
		path string // the field the refusal names
		need string // the permission that lets it through
	}{
		{"tls Secret", operator.NginxOperatorSpec{TLS: []operator.TLSSecret{{SecretName: "db"}}}, "spec.tls[0].secretName", `get secrets db`},
		{"env Secret", operator.NginxOperatorSpec{Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "p"}}}}},
			"spec.env[0].valueFrom.secretKeyRef.name", `get secrets db`},
		{"image pull Secret", operator.NginxOperatorSpec{Pod: &operator.PodOptions{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}}, "spec.pod.imagePullSecrets[0].name", `get secrets pull`},
		{"config ConfigMap", operator.NginxOperatorSpec{Config: &operator.ConfigSource{ConfigMapKeyRef: &operator.ConfigMapKeyReference{Name: "conf", Key: "nginx.conf"}}}, "spec.config.configMapKeyRef.name", `get configmaps conf`},
		{"files ConfigMap", operator.NginxOperatorSpec{Files: []operator.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}}}, "spec.files[0].configMapName", `get configmaps site`},
		{"env ConfigMap", operator.NginxOperatorSpec{Env: []corev1.EnvVar{{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Key: "c"}}}}},
			"spec.env[0].valueFrom.configMapKeyRef.name", `get configmaps conf`},
		{"ServiceAccount", operator.NginxOperatorSpec{Pod: &operator.PodOptions{ServiceAccountName: "deployer"}}, "spec.pod.serviceAccountName", `create serviceaccounts/token deployer`},
		{"default ServiceAccount's token", operator.NginxOperatorSpec{Pod: &operator.PodOptions{ServiceAccountName: "default"}}, "spec.pod.serviceAccountName", `create serviceaccounts/token default`},
		{"capabilities kept", operator.NginxOperatorSpec{SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}}}, "spec.securityContext.capabilities.drop", `create pods`},
		{"Windows host process", operator.NginxOperatorSpec{Pod: &operator.PodOptions{SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}}}}, "spec.pod.securityContext.windowsOptions.hostProcess", `create pods`},
		{"pod labels", operator.NginxOperatorSpec{Pod: &operator.PodOptions{Labels: map[string]string{"app": "payments"}}}, "spec.pod.labels", `create pods`},
		{"pod annotations", operator.NginxOperatorSpec{Pod: &operator.PodOptions{Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/nginx": "unconfined"}}}, "spec.pod.annotations", `create pods`},
		{"node selector", operator.NginxOperatorSpec{Pod: &operator.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": "control-plane"}}}, "spec.pod.nodeSelector", `create pods`},
		{"tolerations", operator.NginxOperatorSpec{Pod: &operator.PodOptions{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}, "spec.pod.tolerations", `create pods`},
		{"affinity", operator.NginxOperatorSpec{Pod: &operator.PodOptions{Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{}}}}, "spec.pod.affinity", `create pods`},
		{"priority class", operator.NginxOperatorSpec{Pod: &operator.PodOptions{PriorityClassName: "system-cluster-critical"}}, "spec.pod.priorityClassName", `create pods`},
		{"spread by other pods", operator.NginxOperatorSpec{Pod: &operator.PodOptions{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{LabelSelector: &metav1.LabelSelector{}}}}}, "spec.pod.topologySpreadConstraints[0].labelSelector", `create pods`},
		{"PodDisruptionBudget", operator.NginxOperatorSpec{PodDisruptionBudget: &operator.PodDisruptionBudgetSpec{}}, "spec.podDisruptionBudget", `create poddisruptionbudgets.policy`},
		{"Service labels", operator.NginxOperatorSpec{Service: &operator.ServiceSpec{Type: operator.ServiceTypeClusterIP, Labels: map[string]string{"a": "b"}}}, "spec.service.labels", `create services`},
		{"Service annotations", operator.NginxOperatorSpec{Service: &operator.ServiceSpec{Type: operator.ServiceTypeClusterIP, Annotations: map[string]string{"a": "b"}}}, "spec.service.annotations", `create services`},
		{"privileged", operator.NginxOperatorSpec{SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}, "spec.securityContext.privileged", `create pods`},
		{"capability", operator.NginxOperatorSpec{SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_ADMIN"}}}}, "spec.securityContext.capabilities.add[1]", `create pods`},
		{"root", operator.NginxOperatorSpec{Pod: &operator.PodOptions{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}}}, "spec.pod.securityContext.runAsUser", `create pods`},
		{"host port", operator.NginxOperatorSpec{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, HostPort: 80}}}, "spec.ports[0].hostPort", `create pods`},
		{"NodePort", operator.NginxOperatorSpec{Service: &operator.ServiceSpec{Type: operator.ServiceTypeNodePort}}, "spec.service.type", `create services`},
		{"LoadBalancer", operator.NginxOperatorSpec{Service: &operator.ServiceSpec{Type: operator.ServiceTypeLoadBalancer}}, "spec.service.type", `create services`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := attributes(nginx(tc.spec), nil, admission.Create, "")
			err := validate(t, &grants{}, a)
			if !apierrors.IsForbidden(err) || err.(apierrors.APIStatus).Status().Code != http.StatusForbidden {
				t.Fatalf("without %q: %v, want 403 Forbidden", tc.need, err)
			}
			want := strings.Fields(tc.need)
			if msg := err.Error(); !strings.Contains(msg, tc.path) || !strings.Contains(msg, want[0]+" "+want[1]) || !strings.Contains(msg, `"alice"`) {
				t.Errorf("the refusal does not name %s, %q and the user: %s", tc.path, tc.need, msg)
			}
			if err := validate(t, &grants{allowed: map[string]bool{tc.need: true}}, a); err != nil {
				t.Errorf("with exactly %q: %v", tc.need, err)
			}
		})
	}
}

func TestWhatTheRestrictedProfileAllowsNeedsNothing(t *testing.T) {
	spec := operator.NginxOperatorSpec{
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Service:         &operator.ServiceSpec{Type: operator.ServiceTypeClusterIP},
		SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}},
		Pod: &operator.PodOptions{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](101), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}}},
		Config: &operator.ConfigSource{Inline: "events {}"},
	}
	g := &grants{}
	if err := validate(t, g, attributes(nginx(spec), nil, admission.Create, "")); err != nil || len(g.asked) != 0 {
		t.Errorf("a spec within the restricted profile and without references: %v, questions %v", err, g.asked)
	}
}

func TestUpdatesAreJudgedOnTheResult(t *testing.T) {
	// An admin's object: a Secret, a ServiceAccount, a NodePort.
	old := nginx(operator.NginxOperatorSpec{Image: "nginx:1", TLS: []operator.TLSSecret{{SecretName: "db"}},
		Pod: &operator.PodOptions{ServiceAccountName: "deployer"}, Service: &operator.ServiceSpec{Type: operator.ServiceTypeNodePort}})
	old.Labels = map[string]string{"team": "a"}

	// Writes that cannot change the pods ask nothing: another writer (the HPA, a teammate
	// without Secret access) scales, labels or writes status.
	replicas := old.DeepCopy()
	replicas.Spec.Replicas = ptr.To[int32](3)
	relabelled := old.DeepCopy()
	relabelled.Labels["team"], relabelled.Annotations = "b", map[string]string{"note": "x"}
	qps := old.DeepCopy()
	qps.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 10, TotalQPS: 100}
	for name, updated := range map[string]*operator.NginxOperator{"replicas": replicas, "labels and annotations": relabelled, "qps": qps, "nothing": old.DeepCopy()} {
		g := &grants{}
		if err := validate(t, g, attributes(updated, old, admission.Update, "")); err != nil || len(g.asked) != 0 {
			t.Errorf("an update of %s: %v, questions %v", name, err, g.asked)
		}
	}
	for _, sub := range []string{"status", "scale"} {
		g := &grants{}
		changed := old.DeepCopy()
		changed.Spec.Image = "evil:1"
		if err := validate(t, g, attributes(changed, old, admission.Update, sub)); err != nil || len(g.asked) != 0 {
			t.Errorf("an update of /%s: %v, questions %v", sub, err, g.asked)
		}
	}

	// A writer who changes only the image inherits nothing: every reference of the result
	// is asked for again.
	image := old.DeepCopy()
	image.Spec.Image = "evil:1"
	err := validate(t, &grants{}, attributes(image, old, admission.Update, ""))
	for _, want := range []string{"spec.tls[0].secretName", `get secrets "db"`, "spec.pod.serviceAccountName", "spec.service.type"} {
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("an image change over an admin's references: %v, want 403 naming %s", err, want)
		}
	}
	// An env reference to a Secret the object already mounts is a new grant to a new image.
	env := image.DeepCopy()
	env.Spec.Env = []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "tls.key"}}}}
	if err := validate(t, &grants{allowed: map[string]bool{"create serviceaccounts/token deployer": true, "create services": true}}, attributes(env, old, admission.Update, "")); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.env[0].valueFrom.secretKeyRef.name") {
		t.Errorf("an env reference to the admin's Secret: %v, want 403", err)
	}
	// The writer who holds every permission may make the same change.
	all := &grants{allowed: map[string]bool{"get secrets db": true, "create serviceaccounts/token deployer": true, "create services": true}}
	if err := validate(t, all, attributes(env, old, admission.Update, "")); err != nil {
		t.Errorf("an authorized writer's update: %v", err)
	}
}

func TestOnePermissionIsAskedOnce(t *testing.T) {
	spec := operator.NginxOperatorSpec{
		TLS:             []operator.TLSSecret{{SecretName: "db"}},
		Env:             []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "p"}}}},
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}},
	}
	g := &grants{allowed: map[string]bool{"get secrets db": true, "create pods": true}}
	if err := validate(t, g, attributes(nginx(spec), nil, admission.Create, "")); err != nil {
		t.Fatal(err)
	}
	if len(g.asked) != 2 {
		t.Errorf("questions %v, want one per permission", g.asked)
	}
}
