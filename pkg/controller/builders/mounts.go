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
	"fmt"
	"path"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// ContentHashAnnotation on the pod template is a hash of everything mounted from
// ConfigMaps and Secrets (the configuration, files and TLS certificates): a change of
// their content changes it, and the Deployment rolls the pods, so nginx never runs with
// half-updated files or an old certificate it would not reload.
const ContentHashAnnotation = "operator.example.com/content-hash"

// configFileName is the key and file name of nginx.conf in the config volume.
const ConfigFileName = "nginx.conf"

// configVolumeName is the volume of spec.config; filesVolumeName and tlsVolumeName name
// those of spec.files and spec.tls by their index.
const ConfigVolumeName = "config"

func FilesVolumeName(i int) string { return fmt.Sprintf("files-%d", i) }

func TLSVolumeName(i int) string { return fmt.Sprintf("tls-%d", i) }

// ConfigMapName is the ConfigMap the controller keeps for spec.config.inline.
func ConfigMapName(no *v1alpha2.NginxOperator) string {
	return no.Name + "-nginx-conf"
}

// ConfigMap returns the ConfigMap holding spec.config.inline, nil when the spec has none.
func ConfigMap(no *v1alpha2.NginxOperator) *corev1ac.ConfigMapApplyConfiguration {
	if no.Spec.Config == nil || no.Spec.Config.Inline == "" {
		return nil
	}
	return corev1ac.ConfigMap(ConfigMapName(no), no.Namespace).
		WithLabels(objectLabels(no)).
		WithOwnerReferences(ownerReference(no)).
		WithData(map[string]string{ConfigFileName: no.Spec.Config.Inline})
}

// mounts returns the volumes and the nginx container's mounts for spec.config, spec.files,
// spec.tls and spec.scratch. Volume names are generated (config, files-N, tls-N,
// scratch-<name>); the order of the spec decides N.
func mounts(no *v1alpha2.NginxOperator) ([]*corev1ac.VolumeApplyConfiguration, []*corev1ac.VolumeMountApplyConfiguration) {
	var volumes []*corev1ac.VolumeApplyConfiguration
	var volumeMounts []*corev1ac.VolumeMountApplyConfiguration
	if cfg := no.Spec.Config; cfg != nil {
		name, key := ConfigMapName(no), ConfigFileName
		if ref := cfg.ConfigMapKeyRef; ref != nil {
			name, key = ref.Name, ref.Key
		}
		volumes = append(volumes, corev1ac.Volume().WithName(ConfigVolumeName).WithConfigMap(
			corev1ac.ConfigMapVolumeSource().WithName(name).WithItems(corev1ac.KeyToPath().WithKey(key).WithPath(ConfigFileName))))
		if Reloads(&no.Spec) {
			// A directory mount, which the kubelet refreshes; nginx.conf itself is the fixed
			// file reloadpod.go mounts, which includes it.
			volumeMounts = append(volumeMounts, corev1ac.VolumeMount().WithName(ConfigVolumeName).
				WithMountPath(reload.ConfigDirectory).WithReadOnly(true))
		} else {
			// subPath keeps the rest of /etc/nginx (mime.types, conf.d) from the image.
			volumeMounts = append(volumeMounts, corev1ac.VolumeMount().WithName(ConfigVolumeName).
				WithMountPath(operand.ConfigPath).WithSubPath(ConfigFileName).WithReadOnly(true))
		}
	}
	for i, f := range no.Spec.Files {
		name := FilesVolumeName(i)
		volumes = append(volumes, corev1ac.Volume().WithName(name).WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(f.ConfigMapName)))
		volumeMounts = append(volumeMounts, corev1ac.VolumeMount().WithName(name).WithMountPath(f.MountPath).WithReadOnly(true))
	}
	for i, t := range no.Spec.TLS {
		name := TLSVolumeName(i)
		volumes = append(volumes, corev1ac.Volume().WithName(name).WithSecret(corev1ac.SecretVolumeSource().WithSecretName(t.SecretName)))
		volumeMounts = append(volumeMounts, corev1ac.VolumeMount().WithName(name).
			WithMountPath(path.Join(operand.TLSDirectory, t.SecretName)).WithReadOnly(true))
	}
	scratchVolumes, scratchVolumeMounts := scratchMounts(no.Spec.Scratch)
	return append(volumes, scratchVolumes...), append(volumeMounts, scratchVolumeMounts...)
}
