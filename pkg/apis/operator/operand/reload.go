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

package operand

// Content updates. spec.contentUpdate says how new content (spec.config, spec.files,
// spec.tls) reaches running pods: ContentUpdateRollout replaces the pods; with
// ContentUpdateReload the kubelet refreshes the mounted volumes in place and the exporter
// sidecar, sharing the pod's process namespace, asks nginx's master process to re-read
// them (SIGHUP) once every volume holds what the pod's annotation says. The contract
// between the controller and the sidecar (annotation, paths, hashes) is package reload.
const (
	ContentUpdateRollout = "Rollout"
	ContentUpdateReload  = "Reload"

	// DefaultImage is the nginx of an NginxOperator created without an image: NGINX's own
	// unprivileged build, which runs as DefaultImageUser. The sidecar that signals nginx
	// must run as the same user.
	DefaultImage           = "nginxinc/nginx-unprivileged:1.27.4"
	DefaultImageUser int64 = 101
)

// NginxUser is the user nginx runs as, when the pod template says it: the nginx
// container's runAsUser, else the pod's, else DefaultImageUser for DefaultImage. Another
// image's user is in the image, which the controller does not read.
func NginxUser(containerRunAsUser, podRunAsUser *int64, image string) (int64, bool) {
	switch {
	case containerRunAsUser != nil:
		return *containerRunAsUser, true
	case podRunAsUser != nil:
		return *podRunAsUser, true
	case image == DefaultImage:
		return DefaultImageUser, true
	}
	return 0, false
}

// CanReload reports whether the pods of a spec can reload in place: the exporter sidecar
// runs (metrics on) and can signal nginx, which takes nginx's user, known and not root.
func CanReload(metricsEnabled bool, user int64, userKnown bool) bool {
	return metricsEnabled && userKnown && user != 0
}
