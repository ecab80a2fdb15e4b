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

// TestStagedPod: an inline configuration in Reload mode is staged by default. nginx.conf
// includes the file the pod's include annotation names (the template's names the stable
// configuration), the config volume holds the stable configuration and the candidate,
// the http block's include of the status directory gets the access log the sidecar
// counts, and the sidecar learns the include file, the access log and the health URL.
func TestStagedPod(t *testing.T) {
	no := reloading("web", "events {}\n")
	no.Spec.HealthcheckPath = "/healthz"
	no.Spec.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	if !Stages(&no.Spec) {
		t.Fatal("an inline configuration in Reload mode is not staged")
	}
	pod := podOf(t, no)
	a := pod.Annotations
	if a[MainConfigAnnotation] != StagedMainConfig || !strings.Contains(StagedMainConfig, "include /etc/nginx/nginx-operator/nginx-include;") {
		t.Errorf("main configuration:\n%s", a[MainConfigAnnotation])
	}
	if got := a[IncludeAnnotation]; got != "include /etc/nginx/nginx-operator-config/nginx.conf;\n" {
		t.Errorf("template include %q; want the stable configuration", got)
	}
	if got := Include(true); got != "include /etc/nginx/nginx-operator-config/candidate.conf;\n" {
		t.Errorf("canary include %q", got)
	}
	if got := a[AccessLogAnnotation]; !strings.Contains(got, "log_format nginx_operator_canary '$msec $status $request_time';") ||
		!strings.Contains(got, "access_log /var/run/nginx-operator-log/access.log nginx_operator_canary") {
		t.Errorf("access log:\n%s", got)
	}
	var items, configItems []string
	for _, v := range pod.Spec.Volumes {
		switch v.Name {
		case statusVolumeName:
			for _, i := range v.DownwardAPI.Items {
				items = append(items, i.Path)
			}
		case ConfigVolumeName:
			for _, i := range v.ConfigMap.Items {
				configItems = append(configItems, i.Key+"="+i.Path)
			}
		}
	}
	if got := strings.Join(items, " "); got != "status.conf content-hashes nginx-main nginx-include access-log.conf" {
		t.Errorf("status volume items: %s", got)
	}
	if got := strings.Join(configItems, " "); got != "nginx.conf=nginx.conf candidate.conf=candidate.conf" {
		t.Errorf("config volume items: %s", got)
	}
	if got := strings.Join(pod.Spec.Containers[1].Args, " "); !strings.HasSuffix(got, "--reload-include-file=/var/run/nginx-operator/desired/nginx-include "+
		"--reload-access-log=/var/run/nginx-operator-log/access.log --reload-health-url=http://127.0.0.1:8080/healthz") {
		t.Errorf("exporter args: %s", got)
	}
	cm := StagedConfigMap(no, "stable", "candidate")
	if cm.Data[ConfigFileName] != "stable" || cm.Data[CandidateFileName] != "candidate" || *cm.Name != "web-nginx-conf" {
		t.Errorf("ConfigMap: %+v", cm)
	}

	// Staging is off when turned off, in Rollout mode, and for a configuration from a
	// ConfigMap: those reach every pod at once, and the pod has none of the above.
	for name, mutate := range map[string]func(*v1alpha2.NginxOperatorSpec){
		"enabled false": func(s *v1alpha2.NginxOperatorSpec) { s.Canary = &v1alpha2.CanarySpec{Enabled: ptr.To(false)} },
		"Rollout":       func(s *v1alpha2.NginxOperatorSpec) { s.ContentUpdate = v1alpha2.ContentUpdateRollout },
		"configMapKeyRef": func(s *v1alpha2.NginxOperatorSpec) {
			s.Config = &v1alpha2.ConfigSource{ConfigMapKeyRef: &v1alpha2.ConfigMapKeyReference{Name: "conf", Key: "nginx.conf"}}
		},
	} {
		off := no.DeepCopy()
		mutate(&off.Spec)
		pod := podOf(t, off)
		if Stages(&off.Spec) || pod.Annotations[IncludeAnnotation] != "" || pod.Annotations[AccessLogAnnotation] != "" {
			t.Errorf("%s: staged %v, annotations %v", name, Stages(&off.Spec), pod.Annotations)
		}
	}
}

// TestCanaryPods: the share of pods that load a configuration first is at least one and
// fewer than all; a single pod stages nothing.
func TestCanaryPods(t *testing.T) {
	for _, tc := range []struct {
		pods     string
		replicas int
		want     int
	}{
		{"", 1, 0}, {"", 2, 1}, {"", 4, 1}, {"", 5, 2}, {"", 20, 5},
		{"1", 4, 1}, {"3", 4, 3}, {"10", 4, 3}, {"50%", 20, 10}, {"1%", 20, 1}, {"99%", 20, 19},
	} {
		spec := v1alpha2.NginxOperatorSpec{}
		if tc.pods != "" {
			v := intstr.Parse(tc.pods)
			spec.Canary = &v1alpha2.CanarySpec{Pods: &v}
		}
		if got := spec.CanarySettings().CanaryPods(tc.replicas); got != tc.want {
			t.Errorf("pods %q of %d: %d; want %d", tc.pods, tc.replicas, got, tc.want)
		}
	}
}
