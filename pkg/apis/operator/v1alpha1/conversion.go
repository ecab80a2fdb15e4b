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

package v1alpha1

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// preservedFields is the annotation payload. Replicas, forceRedeploy and conditions
// are left out because v1alpha1 carries them itself. Spec and status are preserved
// independently: an object whose spec v1alpha1 can express fully keeps no spec here,
// so a v1alpha1 edit of port converts as for a plain object.
// It is not an API type.
// +k8s:openapi-gen=false
// +k8s:deepcopy-gen=false
type preservedFields struct {
	Spec   *v1alpha2.NginxOperatorSpec   `json:"spec,omitempty"`
	Status *v1alpha2.NginxOperatorStatus `json:"status,omitempty"`
}

// Convert_operator_NginxOperator_To_v1alpha1_NginxOperator writes the annotation only
// when the object differs from what a plain v1alpha1 object converts to.
func Convert_operator_NginxOperator_To_v1alpha1_NginxOperator(in *operator.NginxOperator, out *NginxOperator, s conversion.Scope) error {
	if err := autoConvert_operator_NginxOperator_To_v1alpha1_NginxOperator(in, out, s); err != nil {
		return err
	}
	var plain operator.NginxOperatorSpec
	if err := Convert_v1alpha1_NginxOperatorSpec_To_operator_NginxOperatorSpec(&out.Spec, &plain, s); err != nil {
		return err
	}
	var p preservedFields
	if !apiequality.Semantic.DeepEqual(plain, in.Spec) {
		p.Spec = &v1alpha2.NginxOperatorSpec{}
		if err := v1alpha2.Convert_operator_NginxOperatorSpec_To_v1alpha2_NginxOperatorSpec(&in.Spec, p.Spec, s); err != nil {
			return err
		}
		p.Spec.Replicas, p.Spec.ForceRedeploy = nil, ""
	}
	if hasV1alpha2OnlyStatus(&in.Status) {
		p.Status = &v1alpha2.NginxOperatorStatus{}
		if err := v1alpha2.Convert_operator_NginxOperatorStatus_To_v1alpha2_NginxOperatorStatus(&in.Status, p.Status, s); err != nil {
			return err
		}
		p.Status.Conditions = nil
	}
	// An internal object holds the annotation only when a write brought one that
	// validation will refuse; v1alpha1 readers see the server's own value or none.
	_, held := in.Annotations[operator.PreservedFieldsAnnotation]
	if p.Spec == nil && p.Status == nil && !held {
		return nil
	}
	// The annotation map is shared with the input after the shallow meta copy.
	annotations := make(map[string]string, len(in.Annotations)+1)
	for k, v := range in.Annotations {
		if k != operator.PreservedFieldsAnnotation {
			annotations[k] = v
		}
	}
	if p.Spec != nil || p.Status != nil {
		data, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		annotations[operator.PreservedFieldsAnnotation] = string(data)
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	out.Annotations = annotations
	return nil
}

// Convert_v1alpha1_NginxOperator_To_operator_NginxOperator restores what the annotation
// preserved and lets the v1alpha1 fields, which the client may have edited, win.
func Convert_v1alpha1_NginxOperator_To_operator_NginxOperator(in *NginxOperator, out *operator.NginxOperator, s conversion.Scope) error {
	if err := autoConvert_v1alpha1_NginxOperator_To_operator_NginxOperator(in, out, s); err != nil {
		return err
	}
	raw, found := in.Annotations[operator.PreservedFieldsAnnotation]
	if !found {
		return nil
	}
	var p preservedFields
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		// Not a conversion error: server-side apply turns any conversion error into a 500.
		// The annotation stays on the object, and validation refuses it with a 422 that
		// names it, whatever the verb.
		return nil
	}
	if p.Spec != nil {
		var spec operator.NginxOperatorSpec
		if err := v1alpha2.Convert_v1alpha2_NginxOperatorSpec_To_operator_NginxOperatorSpec(p.Spec, &spec, s); err != nil {
			return err
		}
		spec.Replicas = out.Spec.Replicas
		spec.ForceRedeploy = out.Spec.ForceRedeploy
		// An edit of port lands where v1alpha1 read it from: the Service's first port,
		// else the first container port. The container port stays when the Service has
		// one: the image listens where it always did (an object stored with nginx:1.27.4
		// on 80 stays on 80), and Service ports reach container ports by name.
		if in.Spec.Port != nil {
			switch {
			case spec.Service != nil && len(spec.Service.Ports) > 0:
				spec.Service.Ports[0].Port = *in.Spec.Port
			case len(spec.Ports) > 0:
				spec.Ports[0].ContainerPort = *in.Spec.Port
			default: // nothing to move: the port becomes nginx's, as it always did here
				spec.Ports = []corev1.ContainerPort{{Name: v1alpha2.DefaultPortName, ContainerPort: *in.Spec.Port, Protocol: corev1.ProtocolTCP}}
			}
		}
		// A v1alpha1 client that sets replicas asks for a fixed count; it cannot see
		// qps, so its choice wins instead of failing on a field it does not know.
		if spec.Replicas != nil {
			spec.QPS = nil
		}
		out.Spec = spec
	}
	if p.Status != nil {
		conditions := out.Status.Conditions
		if err := v1alpha2.Convert_v1alpha2_NginxOperatorStatus_To_operator_NginxOperatorStatus(p.Status, &out.Status, s); err != nil {
			return err
		}
		out.Status.Conditions = conditions
	}

	annotations := make(map[string]string, len(in.Annotations))
	for k, v := range in.Annotations {
		if k != operator.PreservedFieldsAnnotation {
			annotations[k] = v
		}
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	out.Annotations = annotations
	return nil
}

// Convert_v1alpha1_NginxOperatorSpec_To_operator_NginxOperatorSpec converts a plain
// v1alpha1 spec to what a v1alpha2 object created with defaults only is: the default
// image (nginxinc/nginx-unprivileged, user 101) on its container port 8080 with the
// restricted security contexts, behind a ClusterIP Service whose port is v1alpha1's port,
// and metrics on. Pods run the restricted Pod Security profile by default, which a root
// image cannot pass, so v1alpha1 no longer means stock nginx:1.27.4 as root on its port,
// as it did up to release 0.1. Objects stored with that keep it: read through v1alpha1,
// they carry it in the preserved-fields annotation. Being the same object as the v1alpha2
// defaults, a v1alpha2 object with defaults only reads back through v1alpha1 without one.
func Convert_v1alpha1_NginxOperatorSpec_To_operator_NginxOperatorSpec(in *NginxOperatorSpec, out *operator.NginxOperatorSpec, s conversion.Scope) error {
	*out = operator.NginxOperatorSpec{
		Image:           v1alpha2.DefaultImage,
		Replicas:        in.Replicas,
		ForceRedeploy:   in.ForceRedploy,
		Service:         &operator.ServiceSpec{Type: operator.ServiceTypeClusterIP},
		SecurityContext: v1alpha2.RestrictedSecurityContext(),
		Pod:             &operator.PodOptions{SecurityContext: v1alpha2.RestrictedPodSecurityContext()},
	}
	// Without a port (never after v1alpha1 defaulting; only for an internal object with no
	// ports at all, which v1alpha1 reads as no port) there are no ports either.
	if in.Port != nil {
		out.Ports = []corev1.ContainerPort{{Name: v1alpha2.DefaultPortName, ContainerPort: v1alpha2.UnprivilegedHTTPPort, Protocol: corev1.ProtocolTCP}}
		out.Service.Ports = []operator.ServicePort{{Name: v1alpha2.DefaultPortName, Port: *in.Port}}
	}
	// Metrics as v1alpha2 defaults them: on, unless nginx's port is the exporter's (never
	// the case for 8080); an object whose setting differs keeps it in the annotation.
	out.Metrics = &operator.MetricsSpec{Enabled: ptr.To(!operand.TakesMetricsPort(out.Ports))}
	return nil
}

// Convert_operator_NginxOperatorSpec_To_v1alpha1_NginxOperatorSpec keeps what v1alpha1
// can express; the object-level conversion preserves the rest. port is the Service's
// first port, which is what v1alpha1's port converts to; an object whose Service lists
// no port shows its first container port.
func Convert_operator_NginxOperatorSpec_To_v1alpha1_NginxOperatorSpec(in *operator.NginxOperatorSpec, out *NginxOperatorSpec, s conversion.Scope) error {
	*out = NginxOperatorSpec{Replicas: in.Replicas, ForceRedploy: in.ForceRedeploy}
	switch {
	case in.Service != nil && len(in.Service.Ports) > 0:
		port := in.Service.Ports[0].Port
		out.Port = &port
	case len(in.Ports) > 0:
		port := in.Ports[0].ContainerPort
		out.Port = &port
	}
	return nil
}

// Convert_operator_NginxOperatorStatus_To_v1alpha1_NginxOperatorStatus keeps the
// conditions; the object-level conversion preserves the rest.
func Convert_operator_NginxOperatorStatus_To_v1alpha1_NginxOperatorStatus(in *operator.NginxOperatorStatus, out *NginxOperatorStatus, s conversion.Scope) error {
	out.Conditions = in.Conditions
	return nil
}

func hasV1alpha2OnlyStatus(status *operator.NginxOperatorStatus) bool {
	withoutConditions := *status
	withoutConditions.Conditions = nil
	return !apiequality.Semantic.DeepEqual(withoutConditions, operator.NginxOperatorStatus{})
}

// preservedQPSMode reports whether the annotation records a QPS-driven object.
func preservedQPSMode(annotations map[string]string) bool {
	raw, found := annotations[operator.PreservedFieldsAnnotation]
	if !found {
		return false
	}
	var p preservedFields
	return json.Unmarshal([]byte(raw), &p) == nil && p.Spec != nil && p.Spec.QPS != nil
}
