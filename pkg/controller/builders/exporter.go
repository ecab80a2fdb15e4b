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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// StatusConfigAnnotation on the pod template holds the status server's configuration;
// a downwardAPI volume turns it into the file nginx includes, so it needs no ConfigMap
// and no write beyond the Deployment's.
const StatusConfigAnnotation = "operator.example.com/nginx-status-conf"

// statusVolumeName is the downwardAPI volume of the status server's configuration.
const statusVolumeName = "nginx-operator-status"

// statusConfigFile is the file name of the status server's configuration in its volume.
const statusConfigFile = "status.conf"

// StatusConfig is the server nginx needs for the exporter: stub_status on the pod's
// loopback only, so nothing outside the pod reaches it. Each scrape adds one request to
// nginx_http_requests_total; it is not logged.
var StatusConfig = fmt.Sprintf(`# Mounted by nginx-operator for spec.metrics: nginx's stub_status on the pod's loopback,
# read by the nginx-exporter sidecar. Include it in nginx.conf's http block:
#   include %s/*.conf;
server {
    listen 127.0.0.1:%d;
    access_log off;
    location = %s {
        stub_status;
    }
    location / {
        return 404;
    }
}
`, operand.StatusConfigDirectory, operand.StatusPort, operand.StatusPath)

// DefaultExporterImage is the exporter image of Deployment and of a Reconciler not given
// one; the controller command always gives one (--exporter-image, or its own image).
const DefaultExporterImage = "nginx-operator"

// MetricsEnabled reports whether the pods of the spec run the exporter. The apiserver
// defaults spec.metrics on every object it serves; an object it has not defaulted (a
// unit test's) runs none.
func MetricsEnabled(spec *v1alpha2.NginxOperatorSpec) bool {
	return spec.Metrics != nil && spec.Metrics.Enabled != nil && *spec.Metrics.Enabled
}

// exporterContainer is the sidecar that serves nginx's metrics on the port named metrics.
// It needs no token, no privilege and no writable file: the restricted Pod Security
// standard admits it whatever the nginx container runs as. It has no probes on purpose:
// a failing exporter must never take nginx out of its Service (a pod is ready only when
// every container is, and a restarting one is not).
func exporterContainer(image string) *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().WithName(operand.ExporterContainerName).WithImage(image).
		WithCommand("/nginx-exporter").
		WithArgs(fmt.Sprintf("--listen-address=:%d", operand.MetricsPort),
			fmt.Sprintf("--stub-status-url=http://127.0.0.1:%d%s", operand.StatusPort, operand.StatusPath)).
		WithPorts(corev1ac.ContainerPort().WithName(operand.MetricsPortName).WithContainerPort(operand.MetricsPort).WithProtocol(corev1.ProtocolTCP)).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m"), corev1.ResourceMemory: resource.MustParse("16Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")})).
		// The Go runtime collects harder near the limit instead of being killed at it.
		WithEnv(corev1ac.EnvVar().WithName("GOMEMLIMIT").WithValue("48MiB")).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithSecurityContext(corev1ac.SecurityContext().
			WithRunAsNonRoot(true).WithRunAsUser(65532).WithRunAsGroup(65532).
			WithAllowPrivilegeEscalation(false).
			WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)))
}

// statusMounts are the volume and the nginx container's mounts of the status server's
// configuration: always in its own directory, which a spec.config includes, and,
// without spec.config, also in conf.d, which the images' own nginx.conf includes, unless
// spec.files mounts a directory there (a file cannot be mounted into a read-only
// ConfigMap volume; that configuration includes the directory itself).
func statusMounts(no *v1alpha2.NginxOperator) (*corev1ac.VolumeApplyConfiguration, []*corev1ac.VolumeMountApplyConfiguration) {
	// The items are an atomic list, owned and extracted whole as stored: the apiVersion
	// the server would default is set here, or every reconcile would see a difference
	// and apply again.
	volume := corev1ac.Volume().WithName(statusVolumeName).WithDownwardAPI(corev1ac.DownwardAPIVolumeSource().
		WithItems(corev1ac.DownwardAPIVolumeFile().WithPath(statusConfigFile).
			WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").
				WithFieldPath(fmt.Sprintf("metadata.annotations['%s']", StatusConfigAnnotation)))))
	mounts := []*corev1ac.VolumeMountApplyConfiguration{
		corev1ac.VolumeMount().WithName(statusVolumeName).WithMountPath(operand.StatusConfigDirectory).WithReadOnly(true),
	}
	if no.Spec.Config == nil && !filesCover(no.Spec.Files, operand.DefaultIncludeDirectory) {
		mounts = append(mounts, corev1ac.VolumeMount().WithName(statusVolumeName).
			WithMountPath(operand.DefaultIncludeStatusPath).WithSubPath(statusConfigFile).WithReadOnly(true))
	}
	return volume, mounts
}

// filesCover reports whether a spec.files mount is dir or one of its parents.
func filesCover(files []v1alpha2.ConfigMapFiles, dir string) bool {
	for _, f := range files {
		if f.MountPath == dir || f.MountPath == "/" || strings.HasPrefix(dir, f.MountPath+"/") {
			return true
		}
	}
	return false
}

// withMetrics mounts the status server's configuration in nginx and adds the exporter,
// which also reloads nginx in Reload mode: the pod's containers and volumes. The caller
// puts StatusConfig (and MainConfig) in the pod template's annotations.
func withMetrics(no *v1alpha2.NginxOperator, image string, podSpec *corev1ac.PodSpecApplyConfiguration, nginx *corev1ac.ContainerApplyConfiguration, volumes []*corev1ac.VolumeApplyConfiguration) ([]*corev1ac.ContainerApplyConfiguration, []*corev1ac.VolumeApplyConfiguration) {
	volume, mounts := statusMounts(no)
	nginx.WithVolumeMounts(mounts...)
	exporter := exporterContainer(image)
	if Reloads(&no.Spec) {
		volumes = withReload(no, podSpec, nginx, exporter, volume, volumes)
	}
	return []*corev1ac.ContainerApplyConfiguration{nginx, exporter}, append(volumes, volume)
}
