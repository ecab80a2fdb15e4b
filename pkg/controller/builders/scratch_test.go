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
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func scratchSample() *v1alpha2.NginxOperator {
	no := sample("web")
	no.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}}
	no.Spec.Scratch = []v1alpha2.ScratchVolume{
		{Name: "cache", MountPath: "/var/cache/nginx/proxy", SizeLimit: resource.MustParse("10Gi")},
		{Name: "tmp", MountPath: "/tmp", Medium: corev1.StorageMediumMemory, SizeLimit: resource.MustParse("64Mi")},
	}
	return no
}

func TestDeploymentMountsScratchVolumes(t *testing.T) {
	d, err := Deployment(scratchSample(), "")
	if err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Spec
	volumes := map[string]string{}
	for _, v := range pod.Volumes {
		switch {
		case v.EmptyDir != nil:
			volumes[*v.Name] = "emptyDir sizeLimit=" + v.EmptyDir.SizeLimit.String()
			if v.EmptyDir.Medium != nil {
				volumes[*v.Name] += " medium=" + string(*v.EmptyDir.Medium)
			}
		case v.ConfigMap != nil:
			volumes[*v.Name] = "configMap " + *v.ConfigMap.Name
		}
	}
	wantVolumes := map[string]string{
		"files-0":       "configMap site",
		"scratch-cache": "emptyDir sizeLimit=10Gi",
		"scratch-tmp":   "emptyDir sizeLimit=64Mi medium=Memory",
	}
	if mustJSON(volumes) != mustJSON(wantVolumes) {
		t.Errorf("volumes = %v, want %v", volumes, wantVolumes)
	}
	mounts := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		mounts[*m.MountPath] = *m.Name
		if m.ReadOnly != nil && *m.ReadOnly {
			mounts[*m.MountPath] += " readOnly"
		}
	}
	wantMounts := map[string]string{
		"/usr/share/nginx/html":  "files-0 readOnly",
		"/var/cache/nginx/proxy": "scratch-cache",
		"/tmp":                   "scratch-tmp",
	}
	if mustJSON(mounts) != mustJSON(wantMounts) {
		t.Errorf("mounts = %v, want %v", mounts, wantMounts)
	}
	// Without spec.resources the volumes alone are requested, and no limit is set.
	res := pod.Containers[0].Resources
	if res == nil || res.Limits != nil || mustJSON(res.Requests) != `{"ephemeral-storage":"10Gi","memory":"64Mi"}` {
		t.Errorf("resources = %s, want requests of ephemeral-storage 10Gi and memory 64Mi and no limits", mustJSON(res))
	}
	// The emptyDirs are not content: they do not change the content hash annotation.
	if d.Spec.Template.Annotations != nil {
		t.Errorf("template annotations = %v", d.Spec.Template.Annotations)
	}
}

func TestScratchCountsInResources(t *testing.T) {
	q := resource.MustParse
	for _, tc := range []struct {
		name      string
		resources corev1.ResourceRequirements
		scratch   []v1alpha2.ScratchVolume
		want      string
	}{{
		name:      "requests and limits both grow",
		resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("128Mi"), "cpu": q("100m")}, Limits: corev1.ResourceList{"memory": q("256Mi"), "cpu": q("1")}},
		scratch:   []v1alpha2.ScratchVolume{{Name: "tmp", Medium: corev1.StorageMediumMemory, SizeLimit: q("64Mi")}},
		want:      `{"limits":{"cpu":"1","memory":"320Mi"},"requests":{"cpu":"100m","memory":"192Mi"}}`,
	}, {
		name:      "a request left unset counts from the limit, so a Guaranteed pod stays Guaranteed",
		resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"memory": q("256Mi"), "cpu": q("1")}},
		scratch:   []v1alpha2.ScratchVolume{{Name: "tmp", Medium: corev1.StorageMediumMemory, SizeLimit: q("64Mi")}},
		want:      `{"limits":{"cpu":"1","memory":"320Mi"},"requests":{"memory":"320Mi"}}`,
	}, {
		name:      "no limit is added where the spec sets none",
		resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"ephemeral-storage": q("1Gi")}, Limits: corev1.ResourceList{"memory": q("256Mi")}},
		scratch:   []v1alpha2.ScratchVolume{{Name: "cache", SizeLimit: q("10Gi")}},
		want:      `{"limits":{"memory":"256Mi"},"requests":{"ephemeral-storage":"11Gi"}}`,
	}, {
		name:      "volumes of one medium add up",
		resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"ephemeral-storage": q("2Gi")}},
		scratch:   []v1alpha2.ScratchVolume{{Name: "cache", SizeLimit: q("10Gi")}, {Name: "tmp", SizeLimit: q("512Mi")}},
		want:      `{"limits":{"ephemeral-storage":"12800Mi"},"requests":{"ephemeral-storage":"12800Mi"}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := mustJSON(tc.resources)
			got := withScratchResources(tc.resources, tc.scratch)
			if mustJSON(got) != tc.want {
				t.Errorf("resources = %s, want %s", mustJSON(got), tc.want)
			}
			if mustJSON(tc.resources) != before {
				t.Errorf("the spec's resources changed to %s", mustJSON(tc.resources))
			}
			// The Deployment carries the same.
			no := sample("web")
			no.Spec.Resources, no.Spec.Scratch = tc.resources, tc.scratch
			for i := range no.Spec.Scratch {
				no.Spec.Scratch[i].MountPath = "/var/scratch/" + no.Spec.Scratch[i].Name
			}
			d, err := Deployment(no, "")
			if err != nil {
				t.Fatal(err)
			}
			if res := d.Spec.Template.Spec.Containers[0].Resources; mustJSON(res) != tc.want {
				t.Errorf("Deployment's resources = %s, want %s", mustJSON(res), tc.want)
			}
		})
	}
}

// TestDeploymentWithoutScratchIsUnchanged: with no scratch volumes the Deployment is
// byte for byte what the controller built before spec.scratch existed, so an upgrade
// rolls no pods; an empty list is the same as none.
func TestDeploymentWithoutScratchIsUnchanged(t *testing.T) {
	for _, no := range []*v1alpha2.NginxOperator{sample("web"), scratchSample()} {
		no.Spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"memory": resource.MustParse("128Mi")}}
		without := no.DeepCopy()
		without.Spec.Scratch = nil
		want := mustJSON(deploymentWithoutScratch(t, without))
		for _, scratch := range [][]v1alpha2.ScratchVolume{nil, {}} {
			no := without.DeepCopy()
			no.Spec.Scratch = scratch
			d, err := Deployment(no, "abc")
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(d); got != want {
				t.Errorf("Deployment with scratch %v:\n got %s\nwant %s", scratch, got, want)
			}
		}
	}
}

// deploymentWithoutScratch is Deployment as it was before spec.scratch: the mounts and
// the resources of the spec as they are.
func deploymentWithoutScratch(t *testing.T, no *v1alpha2.NginxOperator) any {
	t.Helper()
	d, err := Deployment(no, "abc")
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if len(d.Spec.Template.Spec.Volumes) != len(no.Spec.Files) || len(c.VolumeMounts) != len(no.Spec.Files) ||
		mustJSON(c.Resources) != mustJSON(no.Spec.Resources) {
		t.Fatalf("pod template = %s", mustJSON(d.Spec.Template))
	}
	return d
}
