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
	"net"
	"path"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// A staged reload (spec.canary) keeps two configurations in the one ConfigMap every pod
// mounts: the stable one (ConfigFileName) and the candidate (CandidateFileName). Each
// pod's IncludeAnnotation, a file of its status volume, says which of the two its nginx
// includes: the template's value names the stable one, and the controller points the
// canary pods at the candidate. No template changes, so no pod is replaced.
const (
	// CandidateFileName is the key and file of the candidate configuration.
	CandidateFileName = "candidate.conf"
	// IncludeAnnotation on a pod is the include directive of the configuration its
	// nginx loads (Include).
	IncludeAnnotation = "operator.example.com/nginx-include"
	// AccessLogAnnotation on the pod template is the access log the sidecar counts
	// (AccessLogConfig), a file of the status volume that spec.config's http block
	// includes with the status server.
	AccessLogAnnotation = "operator.example.com/nginx-access-log"
)

// The downwardAPI items a staged reload adds to the status volume. The include file has
// no .conf suffix: the http block's include of the directory must not read it.
const (
	includeFile   = "nginx-include"
	accessLogFile = "access-log.conf"
)

// Stages reports whether a new spec.config.inline is staged: Reload mode, an inline
// configuration, and spec.canary not turned off. Other content (a ConfigMap's key,
// files, TLS) reaches every pod at once.
func Stages(spec *v1alpha2.NginxOperatorSpec) bool {
	return Reloads(spec) && spec.Config != nil && spec.Config.ConfigMapKeyRef == nil && spec.Config.Inline != "" &&
		spec.CanarySettings().Enabled
}

// Include is the value of IncludeAnnotation: the candidate's include on a canary pod,
// the stable one's on the others.
func Include(candidate bool) string {
	file := ConfigFileName
	if candidate {
		file = CandidateFileName
	}
	return fmt.Sprintf("include %s;\n", path.Join(reload.ConfigDirectory, file))
}

// StagedMainConfig is nginx.conf in a staged pod: it includes what the pod's
// IncludeAnnotation names.
var StagedMainConfig = fmt.Sprintf(`# Mounted by nginx-operator (spec.contentUpdate: Reload, spec.canary): the pod's
# %s annotation names the configuration this pod's nginx includes, the stable
# one or, on a canary pod, the candidate. nginx's errors also go to a file the
# nginx-exporter sidecar reads to report a rejected configuration.
error_log %s warn;
include %s;
`, IncludeAnnotation, reload.ErrorLog, path.Join(operand.StatusConfigDirectory, includeFile))

// AccessLogConfig is the access log a staged pod's sidecar counts: the time, status and
// duration of each request, nothing more. It applies to every server of the http block
// that does not set an access_log of its own.
var AccessLogConfig = fmt.Sprintf(`# Mounted by nginx-operator (spec.canary): the status and duration of each request,
# which the nginx-exporter sidecar counts to compare canary pods with the others.
log_format nginx_operator_canary '%s';
access_log %s nginx_operator_canary buffer=16k flush=1s;
`, reload.TrafficLogFormat, reload.AccessLog)

// StagedConfigMap is the ConfigMap of a staged spec.config.inline: the stable
// configuration and the candidate (the same one while nothing is staged).
func StagedConfigMap(no *v1alpha2.NginxOperator, stable, candidate string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(ConfigMapName(no), no.Namespace).
		WithLabels(objectLabels(no)).
		WithOwnerReferences(ownerReference(no)).
		WithData(map[string]string{ConfigFileName: stable, CandidateFileName: candidate})
}

// StagedConfigFiles are the files of the config volume of a staged pod, to hash as the
// kubelet writes them.
func StagedConfigFiles(stable, candidate string) map[string][]byte {
	return map[string][]byte{ConfigFileName: []byte(stable), CandidateFileName: []byte(candidate)}
}

// HealthURL is what the sidecar requests in the pod after a reload: spec.healthcheckPath,
// or /, on the first TCP port.
func HealthURL(spec *v1alpha2.NginxOperatorSpec) string {
	p := spec.HealthcheckPath
	if p == "" {
		p = "/"
	}
	for _, port := range spec.Ports {
		if port.Protocol == "" || port.Protocol == corev1.ProtocolTCP {
			return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port.ContainerPort))) + p
		}
	}
	return ""
}

// withStaging adds what a staged reload needs to a Reload pod: the candidate's item in
// the config volume, the include and access log items in the status volume, and the
// sidecar's flags.
func withStaging(no *v1alpha2.NginxOperator, status *corev1ac.VolumeApplyConfiguration, volumes []*corev1ac.VolumeApplyConfiguration, exporter *corev1ac.ContainerApplyConfiguration) {
	for _, v := range volumes {
		if v.Name != nil && *v.Name == ConfigVolumeName && v.ConfigMap != nil {
			v.ConfigMap.WithItems(corev1ac.KeyToPath().WithKey(CandidateFileName).WithPath(CandidateFileName))
		}
	}
	for _, item := range [][2]string{{includeFile, IncludeAnnotation}, {accessLogFile, AccessLogAnnotation}} {
		file, annotation := item[0], item[1]
		status.DownwardAPI.WithItems(corev1ac.DownwardAPIVolumeFile().WithPath(file).
			WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").
				WithFieldPath(fmt.Sprintf("metadata.annotations['%s']", annotation))))
	}
	exporter.WithArgs("--reload-include-file="+path.Join(reload.DesiredDirectory, includeFile),
		"--reload-access-log="+reload.AccessLog)
	if url := HealthURL(&no.Spec); url != "" {
		exporter.WithArgs("--reload-health-url=" + url)
	}
}
