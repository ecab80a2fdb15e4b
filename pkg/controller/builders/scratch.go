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
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// scratchMounts returns an emptyDir volume, scratch-<name>, and a writable mount of it
// in the nginx container for every spec.scratch entry, in the order of the spec.
func scratchMounts(scratch []v1alpha2.ScratchVolume) ([]*corev1ac.VolumeApplyConfiguration, []*corev1ac.VolumeMountApplyConfiguration) {
	var volumes []*corev1ac.VolumeApplyConfiguration
	var volumeMounts []*corev1ac.VolumeMountApplyConfiguration
	for _, s := range scratch {
		name := operand.ScratchVolumePrefix + s.Name
		emptyDir := corev1ac.EmptyDirVolumeSource().WithSizeLimit(s.SizeLimit)
		if s.Medium != corev1.StorageMediumDefault {
			emptyDir.WithMedium(s.Medium)
		}
		volumes = append(volumes, corev1ac.Volume().WithName(name).WithEmptyDir(emptyDir))
		volumeMounts = append(volumeMounts, corev1ac.VolumeMount().WithName(name).WithMountPath(s.MountPath))
	}
	return volumes, volumeMounts
}

// scratchResource is what a scratch volume uses up: a tmpfs is charged to the pod's
// memory, a directory on the node's disk to its ephemeral storage.
func scratchResource(medium corev1.StorageMedium) corev1.ResourceName {
	if medium == corev1.StorageMediumMemory {
		return corev1.ResourceMemory
	}
	return corev1.ResourceEphemeralStorage
}

// withScratchResources returns the nginx container's resources with every scratch
// volume's sizeLimit added, so the scheduler places the pod where the space exists and
// the kubelet's accounting includes it: to the request of its resource, and to the limit
// when spec.resources sets one. Without a limit none is added, which would cap nginx
// itself at the size of its volumes. A request left unset where a limit is set counts
// from the limit, as Kubernetes defaults it, so requests stay equal to limits where the
// spec made them so (Guaranteed pods stay Guaranteed). Without scratch volumes the
// resources are returned as they are.
func withScratchResources(res corev1.ResourceRequirements, scratch []v1alpha2.ScratchVolume) corev1.ResourceRequirements {
	if len(scratch) == 0 {
		return res
	}
	out := *res.DeepCopy()
	if out.Requests == nil {
		out.Requests = corev1.ResourceList{}
	}
	for _, s := range scratch {
		name := scratchResource(s.Medium)
		if _, set := out.Requests[name]; !set {
			if limit, limited := res.Limits[name]; limited {
				out.Requests[name] = limit.DeepCopy()
			}
		}
	}
	for _, s := range scratch {
		name := scratchResource(s.Medium)
		if request, set := out.Requests[name]; set {
			request.Add(s.SizeLimit)
			out.Requests[name] = request
		} else {
			out.Requests[name] = s.SizeLimit.DeepCopy()
		}
		if limit, limited := out.Limits[name]; limited {
			limit.Add(s.SizeLimit)
			out.Limits[name] = limit
		}
	}
	return out
}
