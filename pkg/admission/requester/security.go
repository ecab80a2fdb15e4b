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

package requester

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// beyondRestricted is an ask for pods the restricted Pod Security profile forbids: the
// writer must be able to create such pods directly, which takes create on pods (the
// namespace's Pod Security admission then judges those pods as it would the writer's).
func beyondRestricted(path *field.Path, what string) ask {
	return ask{path, what, permission{verb: "create", resource: "pods"}}
}

// containerSecurityAsks lists what a container security context asks beyond the
// restricted profile.
func containerSecurityAsks(path *field.Path, sc *corev1.SecurityContext) []ask {
	if sc == nil {
		return nil
	}
	var out []ask
	if sc.Privileged != nil && *sc.Privileged {
		out = append(out, beyondRestricted(path.Child("privileged"), "a privileged container"))
	}
	if sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation {
		out = append(out, beyondRestricted(path.Child("allowPrivilegeEscalation"), "privilege escalation"))
	}
	if sc.Capabilities != nil {
		for i, c := range sc.Capabilities.Add {
			if c != "NET_BIND_SERVICE" { // the one capability restricted allows
				out = append(out, beyondRestricted(path.Child("capabilities", "add").Index(i), "capability "+string(c)))
			}
		}
		// An empty list is filled with ALL by the controller; a list without ALL keeps the
		// runtime's default capabilities.
		if drop := sc.Capabilities.Drop; len(drop) > 0 && !slices.Contains(drop, "ALL") {
			out = append(out, beyondRestricted(path.Child("capabilities", "drop"), "keeping the runtime's default capabilities (drop lacks ALL)"))
		}
	}
	if sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount {
		out = append(out, beyondRestricted(path.Child("procMount"), "an unmasked /proc"))
	}
	out = append(out, identityAsks(path, sc.RunAsUser, sc.RunAsNonRoot, sc.SeccompProfile, sc.SELinuxOptions, sc.AppArmorProfile, sc.WindowsOptions)...)
	return out
}

// podSecurityAsks lists what a pod security context asks beyond the restricted profile.
func podSecurityAsks(path *field.Path, psc *corev1.PodSecurityContext) []ask {
	if psc == nil {
		return nil
	}
	out := identityAsks(path, psc.RunAsUser, psc.RunAsNonRoot, psc.SeccompProfile, psc.SELinuxOptions, psc.AppArmorProfile, psc.WindowsOptions)
	for i, s := range psc.Sysctls {
		out = append(out, beyondRestricted(path.Child("sysctls").Index(i), "sysctl "+s.Name))
	}
	return out
}

// identityAsks covers the settings pod and container security contexts share.
func identityAsks(path *field.Path, runAsUser *int64, runAsNonRoot *bool, seccomp *corev1.SeccompProfile, seLinux *corev1.SELinuxOptions, appArmor *corev1.AppArmorProfile, windows *corev1.WindowsSecurityContextOptions) []ask {
	var out []ask
	if windows != nil && windows.HostProcess != nil && *windows.HostProcess {
		out = append(out, beyondRestricted(path.Child("windowsOptions", "hostProcess"), "a Windows host process"))
	}
	if runAsUser != nil && *runAsUser == 0 {
		out = append(out, beyondRestricted(path.Child("runAsUser"), "running as root (uid 0)"))
	}
	if runAsNonRoot != nil && !*runAsNonRoot {
		out = append(out, beyondRestricted(path.Child("runAsNonRoot"), "runAsNonRoot false"))
	}
	if seccomp != nil && seccomp.Type == corev1.SeccompProfileTypeUnconfined {
		out = append(out, beyondRestricted(path.Child("seccompProfile", "type"), "an unconfined seccomp profile"))
	}
	if appArmor != nil && appArmor.Type == corev1.AppArmorProfileTypeUnconfined {
		out = append(out, beyondRestricted(path.Child("appArmorProfile", "type"), "an unconfined AppArmor profile"))
	}
	if seLinux != nil && (seLinux.User != "" || seLinux.Role != "" || !allowedSELinuxTypes[seLinux.Type]) {
		out = append(out, beyondRestricted(path.Child("seLinuxOptions"), "custom SELinux options"))
	}
	return out
}

// allowedSELinuxTypes are the SELinux types the baseline (and so restricted) profile allows.
var allowedSELinuxTypes = map[string]bool{"": true, "container_t": true, "container_init_t": true, "container_kvm_t": true, "container_engine_t": true}
