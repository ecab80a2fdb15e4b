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

// MainConfigAnnotation on the pod template holds nginx.conf in Reload mode: a fixed file
// (mounted with subPath, never refreshed, never needing to be) that includes spec.config
// from the directory the kubelet refreshes, and also sends nginx's errors to the file the
// sidecar reads, to tell why nginx rejected a configuration.
const MainConfigAnnotation = "operator.example.com/nginx-main-conf"

// MainConfig is the value of MainConfigAnnotation.
var MainConfig = fmt.Sprintf(`# Mounted by nginx-operator (spec.contentUpdate: Reload): spec.config is included from a
# directory the kubelet refreshes in place. nginx's errors also go to a file the
# nginx-exporter sidecar reads to report a rejected configuration.
error_log %s warn;
include %s;
`, reload.ErrorLog, path.Join(reload.ConfigDirectory, ConfigFileName))

// The downwardAPI items of the status volume that Reload adds.
const (
	mainConfigFile    = "nginx-main"
	contentHashesFile = "content-hashes"
)

// reloadLogVolumeName is the emptyDir nginx writes its errors to for the sidecar.
const reloadLogVolumeName = "nginx-operator-log"

// Reloads reports whether the pods of the spec reload new content in place: asked for, or
// left to the controller and possible (operand.CanReload). A spec that mounts no content
// has nothing to reload and keeps the plain pod.
func Reloads(spec *v1alpha2.NginxOperatorSpec) bool {
	if !MetricsEnabled(spec) || len(contentVolumes(spec)) == 0 {
		return false
	}
	switch spec.ContentUpdate {
	case v1alpha2.ContentUpdateReload:
		return true
	case v1alpha2.ContentUpdateRollout:
		return false
	}
	user, known := v1alpha2.NginxUser(spec)
	return operand.CanReload(true, user, known)
}

// contentVolumes are the volumes whose content Reload follows, by name: spec.config,
// spec.files and spec.tls (scratch volumes are nginx's own to write).
func contentVolumes(spec *v1alpha2.NginxOperatorSpec) []string {
	var names []string
	if spec.Config != nil {
		names = append(names, ConfigVolumeName)
	}
	for i := range spec.Files {
		names = append(names, FilesVolumeName(i))
	}
	for i := range spec.TLS {
		names = append(names, TLSVolumeName(i))
	}
	return names
}

// withReload turns the pod into one that reloads in place: nginx and the exporter share
// the process namespace (the exporter signals nginx's master process, as nginx's own
// user: no capability needed), the exporter sees every content volume read-only and the
// pod's ContentHashesAnnotation through the status volume, and both share the error log.
// The exporter's new mounts give it nothing the pod did not have: the same volumes, no
// token, no privilege.
func withReload(no *v1alpha2.NginxOperator, podSpec *corev1ac.PodSpecApplyConfiguration, nginx, exporter *corev1ac.ContainerApplyConfiguration, status *corev1ac.VolumeApplyConfiguration, volumes []*corev1ac.VolumeApplyConfiguration) []*corev1ac.VolumeApplyConfiguration {
	spec := &no.Spec
	podSpec.WithShareProcessNamespace(true)
	status.DownwardAPI.WithItems(corev1ac.DownwardAPIVolumeFile().WithPath(contentHashesFile).
		WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").
			WithFieldPath(fmt.Sprintf("metadata.annotations['%s']", reload.ContentHashesAnnotation))))
	errorLog := ""
	if spec.Config != nil {
		status.DownwardAPI.WithItems(corev1ac.DownwardAPIVolumeFile().WithPath(mainConfigFile).
			WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").
				WithFieldPath(fmt.Sprintf("metadata.annotations['%s']", MainConfigAnnotation))))
		nginx.WithVolumeMounts(corev1ac.VolumeMount().WithName(statusVolumeName).
			WithMountPath(operand.ConfigPath).WithSubPath(mainConfigFile).WithReadOnly(true))
		errorLog = reload.ErrorLog
	}
	volumes = append(volumes, corev1ac.Volume().WithName(reloadLogVolumeName).WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	nginx.WithVolumeMounts(corev1ac.VolumeMount().WithName(reloadLogVolumeName).WithMountPath(reload.ErrorLogDirectory))
	exporter.WithVolumeMounts(
		corev1ac.VolumeMount().WithName(statusVolumeName).WithMountPath(reload.DesiredDirectory).WithReadOnly(true),
		corev1ac.VolumeMount().WithName(reloadLogVolumeName).WithMountPath(reload.ErrorLogDirectory))
	for _, name := range contentVolumes(spec) {
		exporter.WithVolumeMounts(corev1ac.VolumeMount().WithName(name).
			WithMountPath(path.Join(reload.ContentDirectory, name)).WithReadOnly(true))
	}
	exporter.WithArgs("--reload-content-dir="+reload.ContentDirectory,
		"--reload-desired-file="+reload.DesiredFile,
		"--reload-error-log="+errorLog)
	// Validation (an explicit Reload) or Reloads (an unset one) made sure the user is
	// known and not root.
	user, _ := v1alpha2.NginxUser(spec)
	exporter.SecurityContext.WithRunAsUser(user)
	if Stages(spec) {
		withStaging(no, status, volumes, exporter)
	}
	return volumes
}
