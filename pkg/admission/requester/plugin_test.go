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
		Pod:             &operator.PodOptions{ServiceAccountName: "default", SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](101), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}},
		Config:          &operator.ConfigSource{Inline: "events {}"},
	}
	g := &grants{}
	if err := validate(t, g, attributes(nginx(spec), nil, admission.Create, "")); err != nil || len(g.asked) != 0 {
		t.Errorf("a spec within the restricted profile and without references: %v, questions %v", err, g.asked)
	}
}

func TestUpdatesAreCheckedForWhatTheyAdd(t *testing.T) {
	old := nginx(operator.NginxOperatorSpec{TLS: []operator.TLSSecret{{SecretName: "db"}}, Service: &operator.ServiceSpec{Type: operator.ServiceTypeNodePort}})
	replicas := old.DeepCopy()
	replicas.Spec.Replicas = ptr.To[int32](3)
	g := &grants{}
	// Another writer (the HPA, a teammate without Secret access) changes something else.
	if err := validate(t, g, attributes(replicas, old, admission.Update, "")); err != nil || len(g.asked) != 0 {
		t.Errorf("an update that keeps the accepted references: %v, questions %v", err, g.asked)
	}
	for _, sub := range []string{"status", "scale"} {
		if err := validate(t, g, attributes(replicas, old, admission.Update, sub)); err != nil || len(g.asked) != 0 {
			t.Errorf("an update of /%s: %v, questions %v", sub, err, g.asked)
		}
	}
	added := old.DeepCopy()
	added.Spec.TLS = append(added.Spec.TLS, operator.TLSSecret{SecretName: "other"})
	err := validate(t, g, attributes(added, old, admission.Update, ""))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.tls[1].secretName") || strings.Contains(err.Error(), `"db"`) {
		t.Errorf("an update adding a Secret: %v, want 403 naming only the new one", err)
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
