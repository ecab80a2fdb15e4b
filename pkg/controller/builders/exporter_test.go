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
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// podOf builds the Deployment and returns its pod template as the API types.
func podOf(t *testing.T, no *v1alpha2.NginxOperator) corev1.PodTemplateSpec {
	t.Helper()
	d, err := DeploymentWithExporter(no, "", "registry.example.com/nginx-operator:v9")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(d.Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.PodTemplateSpec
	if err := json.Unmarshal(data, &pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func TestExporterSidecar(t *testing.T) {
	pod := podOf(t, withMetricsOn(sample("web")))
	if len(pod.Spec.Containers) != 2 || pod.Spec.Containers[0].Name != "nginx" || pod.Spec.Containers[1].Name != "nginx-exporter" {
		t.Fatalf("containers: %+v", pod.Spec.Containers)
	}
	exporter := pod.Spec.Containers[1]
	if exporter.Image != "registry.example.com/nginx-operator:v9" || len(exporter.Command) != 1 || exporter.Command[0] != "/nginx-exporter" {
		t.Errorf("exporter image %q, command %q", exporter.Image, exporter.Command)
	}
	if got := strings.Join(exporter.Args, " "); got != "--listen-address=:9113 --stub-status-url=http://127.0.0.1:8079/stub_status" {
		t.Errorf("exporter args: %s", got)
	}
	if len(exporter.Ports) != 1 || exporter.Ports[0].Name != "metrics" || exporter.Ports[0].ContainerPort != 9113 || exporter.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("exporter ports: %+v", exporter.Ports)
	}
	// Small and set: requests for scheduling, a memory limit; no CPU limit to throttle it.
	if r := exporter.Resources; r.Requests.Cpu().MilliValue() != 5 || r.Requests.Memory().Value() != 16<<20 || r.Limits.Memory().Value() != 64<<20 || !r.Limits.Cpu().IsZero() {
		t.Errorf("exporter resources: %+v", r)
	}
	// What the restricted Pod Security standard asks of every container, whatever nginx runs as.
	sc := exporter.SecurityContext
	if sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) == 0 || ptr.Deref(sc.AllowPrivilegeEscalation, true) ||
		!ptr.Deref(sc.ReadOnlyRootFilesystem, false) || sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("exporter security context: %+v", sc)
	}
	// No probes: a failing exporter must not make nginx's pod unready.
	if exporter.ReadinessProbe != nil || exporter.LivenessProbe != nil || exporter.StartupProbe != nil {
		t.Error("the exporter has probes")
	}
	if len(exporter.VolumeMounts) != 0 {
		t.Errorf("the exporter mounts %+v", exporter.VolumeMounts)
	}
	// No token in any container: nothing in the pod talks to the API.
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("the pod gets a ServiceAccount token")
	}

	// nginx gets the status server from the annotation, through a downwardAPI volume.
	conf := pod.Annotations[StatusConfigAnnotation]
	for _, want := range []string{"listen 127.0.0.1:8079;", "location = /stub_status {", "stub_status;", "access_log off;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("status server configuration lacks %q:\n%s", want, conf)
		}
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].DownwardAPI == nil ||
		pod.Spec.Volumes[0].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.annotations['operator.example.com/nginx-status-conf']" ||
		pod.Spec.Volumes[0].DownwardAPI.Items[0].Path != "status.conf" {
		t.Errorf("volumes: %+v", pod.Spec.Volumes)
	}
	if got := mountsOf(pod.Spec.Containers[0]); got != "nginx-operator-status:/etc/nginx/nginx-operator:ro nginx-operator-status:/etc/nginx/conf.d/nginx-operator-status.conf[status.conf]:ro" {
		t.Errorf("nginx mounts without spec.config: %s", got)
	}
	// Only the nginx container's ports are the Service's.
	if svc := Service(withMetricsOn(sample("web"))); len(svc.Spec.Ports) != 1 || *svc.Spec.Ports[0].Name != "http" {
		t.Errorf("Service ports: %+v", svc.Spec.Ports)
	}
}

// TestStatusServerMounts: a spec.config includes the status server's directory itself; so
// does a spec.files mount at (or above) conf.d, which no file can be mounted into.
func TestStatusServerMounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(no *v1alpha2.NginxOperator)
		want   string
	}{
		{"spec.config inline", func(no *v1alpha2.NginxOperator) { no.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}"} },
			"config:/etc/nginx/nginx.conf[nginx.conf]:ro nginx-operator-status:/etc/nginx/nginx-operator:ro"},
		{"spec.files at conf.d", func(no *v1alpha2.NginxOperator) {
			no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "servers", MountPath: "/etc/nginx/conf.d"}}
		}, "files-0:/etc/nginx/conf.d:ro nginx-operator-status:/etc/nginx/nginx-operator:ro"},
		{"spec.files elsewhere", func(no *v1alpha2.NginxOperator) {
			no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "html", MountPath: "/usr/share/nginx/html"}, {ConfigMapName: "d", MountPath: "/etc/nginx/conf.d2"}}
		}, "files-0:/usr/share/nginx/html:ro files-1:/etc/nginx/conf.d2:ro nginx-operator-status:/etc/nginx/nginx-operator:ro nginx-operator-status:/etc/nginx/conf.d/nginx-operator-status.conf[status.conf]:ro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			no := withMetricsOn(sample("web"))
			tc.mutate(no)
			if got := mountsOf(podOf(t, no).Spec.Containers[0]); got != tc.want {
				t.Errorf("nginx mounts:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func mountsOf(c corev1.Container) string {
	var out []string
	for _, m := range c.VolumeMounts {
		s := m.Name + ":" + m.MountPath
		if m.SubPath != "" {
			s += "[" + m.SubPath + "]"
		}
		if m.ReadOnly {
			s += ":ro"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestMetricsOffIsUnchanged: with spec.metrics.enabled false the Deployment is byte for
// byte the one built before spec.metrics existed (an unset spec.metrics takes that path).
func TestMetricsOffIsUnchanged(t *testing.T) {
	for _, no := range []*v1alpha2.NginxOperator{sample("web"), func() *v1alpha2.NginxOperator {
		no := sample("site")
		no.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}"}
		no.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "cert"}}
		return no
	}()} {
		before, err := Deployment(no, "abc")
		if err != nil {
			t.Fatal(err)
		}
		off := no.DeepCopy()
		off.Spec.Metrics = &v1alpha2.MetricsSpec{Enabled: ptr.To(false)}
		after, err := DeploymentWithExporter(off, "abc", "registry.example.com/nginx-operator:v9")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		if string(a) != string(b) {
			t.Errorf("%s: metrics off changed the Deployment:\n%s\n%s", no.Name, b, a)
		}
		if strings.Contains(string(a), "nginx-exporter") || strings.Contains(string(a), "status") {
			t.Errorf("%s: metrics off still mentions the exporter: %s", no.Name, a)
		}
	}
}
