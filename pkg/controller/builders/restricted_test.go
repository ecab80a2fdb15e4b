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
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func TestRestrictedSecurity(t *testing.T) {
	runtimeDefault := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	restrictedCaps := &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}}
	for _, tc := range []struct {
		name          string
		container     *corev1.SecurityContext
		pod           *corev1.PodSecurityContext
		wantContainer *corev1.SecurityContext
		wantPod       *corev1.PodSecurityContext
	}{{
		name:          "nothing set: the full restricted profile",
		wantContainer: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: restrictedCaps},
		wantPod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
	}, {
		name:          "empty contexts: the same",
		container:     &corev1.SecurityContext{},
		pod:           &corev1.PodSecurityContext{},
		wantContainer: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: restrictedCaps},
		wantPod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
	}, {
		name: "every field set explicitly is kept",
		container: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}},
			RunAsUser: ptr.To[int64](1000), ReadOnlyRootFilesystem: ptr.To(true)},
		pod: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}, FSGroup: ptr.To[int64](101)},
		wantContainer: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}},
			RunAsUser: ptr.To[int64](1000), ReadOnlyRootFilesystem: ptr.To(true)},
		wantPod: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}, FSGroup: ptr.To[int64](101)},
	}, {
		name:          "runAsUser 0 on the container: no runAsNonRoot",
		container:     &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)},
		wantContainer: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), AllowPrivilegeEscalation: ptr.To(false), Capabilities: restrictedCaps},
		wantPod:       &corev1.PodSecurityContext{SeccompProfile: runtimeDefault},
	}, {
		name:          "runAsUser 0 on the pod: no runAsNonRoot",
		pod:           &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)},
		wantContainer: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: restrictedCaps},
		wantPod:       &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0), SeccompProfile: runtimeDefault},
	}, {
		name:          "a non-root runAsUser still gets runAsNonRoot",
		pod:           &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](101)},
		wantContainer: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: restrictedCaps},
		wantPod:       &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](101), RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
	}, {
		name:          "privileged: no allowPrivilegeEscalation false, which Kubernetes refuses beside it",
		container:     &corev1.SecurityContext{Privileged: ptr.To(true)},
		wantContainer: &corev1.SecurityContext{Privileged: ptr.To(true), Capabilities: restrictedCaps},
		wantPod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
	}, {
		name:          "SYS_ADMIN added: no allowPrivilegeEscalation false either; drop ALL filled",
		container:     &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CAP_SYS_ADMIN"}}},
		wantContainer: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CAP_SYS_ADMIN"}, Drop: []corev1.Capability{"ALL"}}},
		wantPod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
	}, {
		name:          "capabilities with an empty drop list: ALL filled, add kept as given",
		container:     &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CHOWN"}}},
		wantContainer: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CHOWN"}, Drop: []corev1.Capability{"ALL"}}},
		wantPod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: runtimeDefault},
	}, {
		name:          "a container seccomp profile: none on the pod",
		container:     &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("nginx.json")}},
		wantContainer: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("nginx.json")}, AllowPrivilegeEscalation: ptr.To(false), Capabilities: restrictedCaps},
		wantPod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			container, pod := tc.container.DeepCopy(), tc.pod.DeepCopy()
			gotContainer, gotPod := restrictedSecurity(container, pod)
			if !apiequality.Semantic.DeepEqual(gotContainer, tc.wantContainer) {
				t.Errorf("container = %s, want %s", mustJSON(gotContainer), mustJSON(tc.wantContainer))
			}
			if !apiequality.Semantic.DeepEqual(gotPod, tc.wantPod) {
				t.Errorf("pod = %s, want %s", mustJSON(gotPod), mustJSON(tc.wantPod))
			}
			if !apiequality.Semantic.DeepEqual(container, tc.container) || !apiequality.Semantic.DeepEqual(pod, tc.pod) {
				t.Error("the spec's security contexts were changed")
			}
		})
	}
}

// The Deployment carries the merge: a named image with no security context runs restricted.
func TestDeploymentIsRestrictedWhateverTheImage(t *testing.T) {
	d, err := Deployment(sample("web"), "")
	if err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Spec
	if got := mustJSON(pod.Containers[0].SecurityContext); got != `{"capabilities":{"add":["NET_BIND_SERVICE"],"drop":["ALL"]},"allowPrivilegeEscalation":false}` {
		t.Errorf("container security context = %s", got)
	}
	if got := mustJSON(pod.SecurityContext); got != `{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}` {
		t.Errorf("pod security context = %s", got)
	}

	// Root by number and a container seccomp profile: nothing is left to fill on the pod.
	root := sample("root")
	root.Spec.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	if d, _ := Deployment(root, ""); d.Spec.Template.Spec.SecurityContext != nil {
		t.Errorf("pod security context = %s, want none", mustJSON(d.Spec.Template.Spec.SecurityContext))
	}

	// The default image's defaulted contexts are complete already but for the one added
	// capability: only what the spec leaves unset is filled.
	defaulted := sample("default")
	defaulted.Spec.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	defaulted.Spec.Pod = &v1alpha2.PodOptions{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}
	d, _ = Deployment(defaulted, "")
	if got := mustJSON(d.Spec.Template.Spec.Containers[0].SecurityContext); got != `{"capabilities":{"drop":["ALL"]},"allowPrivilegeEscalation":false}` {
		t.Errorf("container security context of a defaulted spec = %s", got)
	}
}

// The controller's pod annotations win over the user's, set before or refused now.
func TestDeploymentAnnotationsOfTheControllerWin(t *testing.T) {
	no := withMetricsOn(sample("web"))
	no.Spec.ForceRedeploy = "v2"
	no.Spec.Pod = &v1alpha2.PodOptions{Annotations: map[string]string{
		StatusConfigAnnotation:           "server { listen 0.0.0.0:80; }",
		ForceRedeployAnnotation:          "v1",
		ContentHashAnnotation:            "forged",
		"operator.example.com/elsewhere": "x",
		"team":                           "web",
	}}
	d, err := Deployment(no, "")
	if err != nil {
		t.Fatal(err)
	}
	got := d.Spec.Template.Annotations
	want := map[string]string{StatusConfigAnnotation: StatusConfig, ForceRedeployAnnotation: "v2", "team": "web"}
	if !equalMaps(got, want) {
		t.Errorf("template annotations = %v, want %v", got, want)
	}
}
