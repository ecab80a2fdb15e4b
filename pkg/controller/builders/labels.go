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

// Package builders turns an NginxOperator into the objects it asks for: the Deployment
// (its nginx container, pod template and exporter sidecar), the Service, the
// PodDisruptionBudget and the ConfigMap of an inline configuration. Every function is pure:
// no client, no clock, no state, so each is tested with a table of specs.
package builders

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

const (
	// FieldManager owns every field the controller applies.
	FieldManager = operand.ManagedBy
	// ContainerName is the name of the nginx container.
	ContainerName = operand.ContainerName
	// ForceRedeployAnnotation on the pod template carries spec.forceRedeploy, so a new
	// value rolls the pods.
	ForceRedeployAnnotation = "operator.example.com/force-redeploy"
	// PreStopDelaySeconds is how long a terminating nginx pod keeps serving before nginx
	// is asked to stop: longer than kube-proxy takes to drop it from the Service.
	PreStopDelaySeconds = 5
	// controllerAnnotationPrefix is that of the pod annotations the controller sets.
	controllerAnnotationPrefix = v1alpha2.GroupName + "/"
	// ManagedByLabel marks every Deployment and Service the controller applies, with
	// the value FieldManager; the informer caches hold only objects that carry it.
	ManagedByLabel = operand.ManagedByLabel
)

// SelectorLabels select the pods of one NginxOperator; the instance label keeps two
// NginxOperators in a namespace from selecting each other's pods.
func SelectorLabels(no *v1alpha2.NginxOperator) map[string]string {
	return operand.SelectorLabels(no.Name)
}

func objectLabels(no *v1alpha2.NginxOperator) map[string]string {
	l := SelectorLabels(no)
	l[ManagedByLabel] = FieldManager
	return l
}

// DesiredReplicas is ceil(totalQPS/singlePodQPS) in QPS mode, else spec.replicas,
// else the default.
func DesiredReplicas(spec *v1alpha2.NginxOperatorSpec) int32 {
	if spec.QPS != nil {
		return operand.ReplicasForQPS(spec.QPS.TotalQPS, spec.QPS.SinglePodQPS)
	}
	return ptr.Deref(spec.Replicas, operand.DefaultReplicas)
}

func ownerReference(no *v1alpha2.NginxOperator) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(v1alpha2.SchemeGroupVersion.String()).
		WithKind("NginxOperator").
		WithName(no.Name).
		WithUID(no.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}
