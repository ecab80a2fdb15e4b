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
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestReloadPod: in Reload mode nginx.conf is the fixed file that includes spec.config
// from a refreshed directory, and the exporter, as nginx's user in nginx's process
// namespace, sees every content volume, the pod's wanted content and the error log.
func TestReloadPod(t *testing.T) {
	no := reloading("web", "events {}\n")
	no.Spec.Canary = &v1alpha2.CanarySpec{Enabled: ptr.To(false)} // stagedpod_test.go has the staged pod
	no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "html", MountPath: "/usr/share/nginx/html"}}
	no.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "cert"}}
	pod := podOf(t, no)
	if !ptr.Deref(pod.Spec.ShareProcessNamespace, false) {
		t.Error("the pod does not share its process namespace")
	}
	if pod.Annotations[MainConfigAnnotation] != MainConfig || !strings.Contains(MainConfig, "include /etc/nginx/nginx-operator-config/nginx.conf;") ||
		!strings.Contains(MainConfig, "error_log /var/run/nginx-operator-log/error.log warn;") {
		t.Errorf("main configuration:\n%s", pod.Annotations[MainConfigAnnotation])
	}
	nginx, exporter := pod.Spec.Containers[0], pod.Spec.Containers[1]
	if got, want := mountsOf(nginx), "config:/etc/nginx/nginx-operator-config:ro files-0:/usr/share/nginx/html:ro tls-0:/etc/nginx/tls/cert:ro "+
		"nginx-operator-status:/etc/nginx/nginx-operator:ro nginx-operator-status:/etc/nginx/nginx.conf[nginx-main]:ro nginx-operator-log:/var/run/nginx-operator-log"; got != want {
		t.Errorf("nginx mounts:\n got %s\nwant %s", got, want)
	}
	if got, want := mountsOf(exporter), "nginx-operator-status:/var/run/nginx-operator/desired:ro nginx-operator-log:/var/run/nginx-operator-log "+
		"config:/var/run/nginx-operator/content/config:ro files-0:/var/run/nginx-operator/content/files-0:ro tls-0:/var/run/nginx-operator/content/tls-0:ro"; got != want {
		t.Errorf("exporter mounts:\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(exporter.Args, " "); !strings.HasSuffix(got, "--reload-content-dir=/var/run/nginx-operator/content --reload-desired-file=/var/run/nginx-operator/desired/content-hashes --reload-error-log=/var/run/nginx-operator-log/error.log") {
		t.Errorf("exporter args: %s", got)
	}
	if sc := exporter.SecurityContext; ptr.Deref(sc.RunAsUser, 0) != 101 || !ptr.Deref(sc.RunAsNonRoot, false) || sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 {
		t.Errorf("exporter security context: %+v", sc)
	}
	var items []string
	for _, v := range pod.Spec.Volumes {
		if v.Name == statusVolumeName {
			for _, i := range v.DownwardAPI.Items {
				items = append(items, i.Path+"="+i.FieldRef.FieldPath)
			}
		}
	}
	if got := strings.Join(items, " "); got != "status.conf=metadata.annotations['operator.example.com/nginx-status-conf'] "+
		"content-hashes=metadata.annotations['operator.example.com/content-hashes'] nginx-main=metadata.annotations['operator.example.com/nginx-main-conf']" {
		t.Errorf("status volume items: %s", got)
	}

	// Without spec.config the image's own nginx.conf stays; nginx keeps its own error log.
	no.Spec.Config = nil
	pod = podOf(t, no)
	if _, found := pod.Annotations[MainConfigAnnotation]; found || strings.Contains(mountsOf(pod.Spec.Containers[0]), "/etc/nginx/nginx.conf") {
		t.Errorf("without spec.config: annotations %v, nginx mounts %s", pod.Annotations, mountsOf(pod.Spec.Containers[0]))
	}
	if args := strings.Join(pod.Spec.Containers[1].Args, " "); !strings.HasSuffix(args, "--reload-error-log=") {
		t.Errorf("exporter args without spec.config: %s", args)
	}

	// The default image's user is known without the spec naming it.
	no.Spec.SecurityContext, no.Spec.Image = nil, v1alpha2.DefaultImage
	if user := ptr.Deref(podOf(t, no).Spec.Containers[1].SecurityContext.RunAsUser, 0); user != 101 {
		t.Errorf("exporter user with the default image: %d", user)
	}
}

// TestContentChangeRollsOnlyInRolloutMode: the content hash reaches the pod template,
// and so replaces the pods, in Rollout mode only.
func TestContentChangeRollsOnlyInRolloutMode(t *testing.T) {
	for _, mode := range []v1alpha2.ContentUpdatePolicy{v1alpha2.ContentUpdateRollout, v1alpha2.ContentUpdateReload} {
		no := reloading("web", "events {}\n")
		no.Spec.ContentUpdate = mode
		a, errA := DeploymentWithExporter(no, "hash-a", "exporter")
		b, errB := DeploymentWithExporter(no, "hash-b", "exporter")
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		same := a.Spec.Template.Annotations[ContentHashAnnotation] == b.Spec.Template.Annotations[ContentHashAnnotation]
		if same != (mode == v1alpha2.ContentUpdateReload) {
			t.Errorf("%s: templates for two contents are the same: %v", mode, same)
		}
	}
}

// TestReloadsWhereThePodsCan: an unset spec.contentUpdate reloads where the pods can (the
// sidecar runs and nginx's user is known and not root) and the spec mounts content; set,
// it is obeyed (validation refuses a Reload that cannot work).
func TestReloadsWhereThePodsCan(t *testing.T) {
	user := func(uid int64) func(*v1alpha2.NginxOperatorSpec) {
		return func(s *v1alpha2.NginxOperatorSpec) {
			s.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To(uid)}
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha2.NginxOperatorSpec)
		want   bool
	}{
		{"unset, the default image", func(s *v1alpha2.NginxOperatorSpec) { s.Image = v1alpha2.DefaultImage }, true},
		{"unset, a named image without a user", func(s *v1alpha2.NginxOperatorSpec) {}, false},
		{"unset, a named image with its user", user(1000), true},
		{"unset, the pod's user", func(s *v1alpha2.NginxOperatorSpec) {
			s.Pod = &v1alpha2.PodOptions{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}}
		}, true},
		{"unset, root", user(0), false},
		{"unset, the default image, no content mounted", func(s *v1alpha2.NginxOperatorSpec) { s.Image, s.Config = v1alpha2.DefaultImage, nil }, false},
		{"unset, the default image, metrics off", func(s *v1alpha2.NginxOperatorSpec) {
			s.Image, s.Metrics = v1alpha2.DefaultImage, &v1alpha2.MetricsSpec{Enabled: ptr.To(false)}
		}, false},
		{"Rollout", func(s *v1alpha2.NginxOperatorSpec) {
			s.Image, s.ContentUpdate = v1alpha2.DefaultImage, v1alpha2.ContentUpdateRollout
		}, false},
		{"Reload", func(s *v1alpha2.NginxOperatorSpec) { user(1000)(s); s.ContentUpdate = v1alpha2.ContentUpdateReload }, true},
		{"files only", func(s *v1alpha2.NginxOperatorSpec) {
			s.Image, s.Config = v1alpha2.DefaultImage, nil
			s.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "html", MountPath: "/usr/share/nginx/html"}}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := withMetricsOn(sample("web")).Spec
			spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\n"}
			tc.mutate(&spec)
			if got := Reloads(&spec); got != tc.want {
				t.Errorf("Reloads = %v, want %v", got, tc.want)
			}
		})
	}
}
