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
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// permission is what a writer must hold to ask the controller for something: the verb on
// a resource (and subresource, and name when one object is concerned) of the object's
// namespace, in the core group.
type permission struct {
	verb, resource, subresource, name string
}

func (p permission) String() string {
	r := p.resource
	if p.subresource != "" {
		r += "/" + p.subresource
	}
	if p.name != "" {
		return fmt.Sprintf("%s %s %q", p.verb, r, p.name)
	}
	return p.verb + " " + r
}

// ask is one thing a spec makes the controller do with its own identity, where the spec
// asks for it, and the permission that lets the writer do it without the controller.
type ask struct {
	path *field.Path
	what string // what is asked, e.g. `Secret "tls"`; the same ask in the old object is not checked again
	need permission
}

// asks lists what spec makes the controller do on the writer's behalf (docs/security.md
// has the table): mount Secrets and ConfigMaps, run as a ServiceAccount, run pods beyond
// the restricted Pod Security profile, expose a NodePort or a LoadBalancer.
func asks(spec *operator.NginxOperatorSpec) []ask {
	var out []ask
	secret := func(path *field.Path, name string) {
		out = append(out, ask{path, fmt.Sprintf("Secret %q", name), permission{verb: "get", resource: "secrets", name: name}})
	}
	configMap := func(path *field.Path, name string) {
		out = append(out, ask{path, fmt.Sprintf("ConfigMap %q", name), permission{verb: "get", resource: "configmaps", name: name}})
	}
	specPath := field.NewPath("spec")
	for i, t := range spec.TLS {
		secret(specPath.Child("tls").Index(i).Child("secretName"), t.SecretName)
	}
	if spec.Config != nil && spec.Config.ConfigMapKeyRef != nil {
		configMap(specPath.Child("config", "configMapKeyRef", "name"), spec.Config.ConfigMapKeyRef.Name)
	}
	for i, f := range spec.Files {
		configMap(specPath.Child("files").Index(i).Child("configMapName"), f.ConfigMapName)
	}
	for i, e := range spec.Env {
		if e.ValueFrom == nil {
			continue
		}
		from := specPath.Child("env").Index(i).Child("valueFrom")
		if ref := e.ValueFrom.SecretKeyRef; ref != nil {
			secret(from.Child("secretKeyRef", "name"), ref.Name)
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
			configMap(from.Child("configMapKeyRef", "name"), ref.Name)
		}
	}
	if pod := spec.Pod; pod != nil {
		podPath := specPath.Child("pod")
		for i, s := range pod.ImagePullSecrets {
			secret(podPath.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
		}
		// The pods carry the ServiceAccount's token: as TokenRequest does, acting as a
		// ServiceAccount takes create on its token. The namespace's default one is what any
		// pod gets.
		if sa := pod.ServiceAccountName; sa != "" && sa != "default" {
			out = append(out, ask{podPath.Child("serviceAccountName"), fmt.Sprintf("ServiceAccount %q", sa),
				permission{verb: "create", resource: "serviceaccounts", subresource: "token", name: sa}})
		}
		out = append(out, podSecurityAsks(podPath.Child("securityContext"), pod.SecurityContext)...)
	}
	out = append(out, containerSecurityAsks(specPath.Child("securityContext"), spec.SecurityContext)...)
	for i, p := range spec.Ports {
		if p.HostPort != 0 {
			out = append(out, beyondRestricted(specPath.Child("ports").Index(i).Child("hostPort"), "host port "+strconv.Itoa(int(p.HostPort))))
		}
	}
	if svc := spec.Service; svc != nil && (svc.Type == operator.ServiceTypeNodePort || svc.Type == operator.ServiceTypeLoadBalancer) {
		out = append(out, ask{specPath.Child("service", "type"), "a Service of type " + string(svc.Type),
			permission{verb: "create", resource: "services"}})
	}
	return out
}

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
	}
	if sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount {
		out = append(out, beyondRestricted(path.Child("procMount"), "an unmasked /proc"))
	}
	out = append(out, identityAsks(path, sc.RunAsUser, sc.RunAsNonRoot, sc.SeccompProfile, sc.SELinuxOptions, sc.AppArmorProfile)...)
	return out
}

// podSecurityAsks lists what a pod security context asks beyond the restricted profile.
func podSecurityAsks(path *field.Path, psc *corev1.PodSecurityContext) []ask {
	if psc == nil {
		return nil
	}
	out := identityAsks(path, psc.RunAsUser, psc.RunAsNonRoot, psc.SeccompProfile, psc.SELinuxOptions, psc.AppArmorProfile)
	for i, s := range psc.Sysctls {
		out = append(out, beyondRestricted(path.Child("sysctls").Index(i), "sysctl "+s.Name))
	}
	return out
}

// identityAsks covers the settings pod and container security contexts share.
func identityAsks(path *field.Path, runAsUser *int64, runAsNonRoot *bool, seccomp *corev1.SeccompProfile, seLinux *corev1.SELinuxOptions, appArmor *corev1.AppArmorProfile) []ask {
	var out []ask
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
