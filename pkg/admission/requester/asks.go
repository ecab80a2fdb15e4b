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

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// permission is what a writer must hold to ask the controller for something: the verb on
// a resource (and subresource, and name when one object is concerned) of the object's
// namespace, in the core group unless group says otherwise.
type permission struct {
	verb, group, resource, subresource, name string
}

func (p permission) String() string {
	r := p.resource
	if p.group != "" {
		r += "." + p.group
	}
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
	what string // what is asked, e.g. `Secret "tls"`
	need permission
}

// asks lists what spec makes the controller do on the writer's behalf (docs/security.md
// has the table): mount Secrets and ConfigMaps, run as a ServiceAccount, run pods beyond
// the restricted Pod Security profile, choose the pods' labels, annotations and placement,
// guard them with a PodDisruptionBudget, expose a NodePort or a LoadBalancer or label and
// annotate the Service.
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
		// ServiceAccount takes create on its token, the namespace's "default" one included
		// (without a name the pods get no token at all).
		if sa := pod.ServiceAccountName; sa != "" {
			out = append(out, ask{podPath.Child("serviceAccountName"), fmt.Sprintf("ServiceAccount %q", sa),
				permission{verb: "create", resource: "serviceaccounts", subresource: "token", name: sa}})
		}
		out = append(out, podSecurityAsks(podPath.Child("securityContext"), pod.SecurityContext)...)
		out = append(out, podOptionAsks(podPath, pod)...)
	}
	out = append(out, containerSecurityAsks(specPath.Child("securityContext"), spec.SecurityContext)...)
	for i, p := range spec.Ports {
		if p.HostPort != 0 {
			out = append(out, beyondRestricted(specPath.Child("ports").Index(i).Child("hostPort"), "host port "+strconv.Itoa(int(p.HostPort))))
		}
	}
	if svc := spec.Service; svc != nil {
		out = append(out, serviceAsks(specPath.Child("service"), svc)...)
	}
	// A budget of the controller's can hold back every drain of the nodes the pods run on.
	if spec.PodDisruptionBudget != nil {
		out = append(out, ask{specPath.Child("podDisruptionBudget"), "a PodDisruptionBudget",
			permission{verb: "create", group: "policy", resource: "poddisruptionbudgets"}})
	}
	return out
}

// serviceAsks lists what the Service needs beyond a ClusterIP of the pods' own: a type that
// opens ports on the nodes or a load balancer, and labels and annotations, which other
// controllers act on (load balancer and DNS controllers, kube-proxy's service-proxy-name).
func serviceAsks(path *field.Path, svc *operator.ServiceSpec) []ask {
	createServices := permission{verb: "create", resource: "services"}
	var out []ask
	if svc.Type == operator.ServiceTypeNodePort || svc.Type == operator.ServiceTypeLoadBalancer {
		out = append(out, ask{path.Child("type"), "a Service of type " + string(svc.Type), createServices})
	}
	if len(svc.Labels) > 0 {
		out = append(out, ask{path.Child("labels"), "labels of the Service", createServices})
	}
	if len(svc.Annotations) > 0 {
		out = append(out, ask{path.Child("annotations"), "annotations of the Service", createServices})
	}
	return out
}
