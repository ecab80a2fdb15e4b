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
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// restrictedSecurity returns the nginx container's and the pod's security contexts: what
// the spec sets, and the restricted Pod Security profile for every field it leaves unset,
// whatever the image. Writing an NginxOperator grants no power by omission; a spec that
// asks for more was judged by the requester check (docs/security.md). The inputs are not
// changed.
func restrictedSecurity(container *corev1.SecurityContext, pod *corev1.PodSecurityContext) (*corev1.SecurityContext, *corev1.PodSecurityContext) {
	c := container.DeepCopy()
	if c == nil {
		c = &corev1.SecurityContext{}
	}
	p := pod.DeepCopy()
	if p == nil {
		p = &corev1.PodSecurityContext{}
	}
	switch {
	case c.Capabilities == nil:
		// The one capability the restricted profile lets a pod add: ports below 1024.
		c.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}}
	case len(c.Capabilities.Drop) == 0:
		c.Capabilities.Drop = []corev1.Capability{"ALL"}
	}
	// Kubernetes refuses allowPrivilegeEscalation: false beside these two.
	if c.AllowPrivilegeEscalation == nil && !ptr.Deref(c.Privileged, false) && !addsSysAdmin(c.Capabilities) {
		c.AllowPrivilegeEscalation = ptr.To(false)
	}
	// Root by number was asked for and judged; runAsNonRoot would keep the pod from starting.
	if p.RunAsNonRoot == nil && !isRoot(c.RunAsUser) && !isRoot(p.RunAsUser) {
		p.RunAsNonRoot = ptr.To(true)
	}
	if p.SeccompProfile == nil && c.SeccompProfile == nil {
		p.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return c, p
}

func addsSysAdmin(caps *corev1.Capabilities) bool {
	return caps != nil && (slices.Contains(caps.Add, "SYS_ADMIN") || slices.Contains(caps.Add, "CAP_SYS_ADMIN"))
}

func isRoot(uid *int64) bool {
	return uid != nil && *uid == 0
}
