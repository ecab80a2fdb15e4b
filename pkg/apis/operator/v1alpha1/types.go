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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +k8s:prerelease-lifecycle-gen:introduced=0.1
// +k8s:prerelease-lifecycle-gen:deprecated=0.1
// +k8s:prerelease-lifecycle-gen:removed=0.4
// +k8s:prerelease-lifecycle-gen:replacement=operator.example.com,v1alpha2,NginxOperator

// NginxOperator runs nginx as a Deployment with a Service in front of it.
// Deprecated: use operator.example.com/v1alpha2.
type NginxOperator struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// spec is the desired nginx deployment.
	// +optional
	Spec NginxOperatorSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// status is what the controller last observed.
	// +optional
	Status NginxOperatorStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +k8s:prerelease-lifecycle-gen:introduced=0.1
// +k8s:prerelease-lifecycle-gen:deprecated=0.1
// +k8s:prerelease-lifecycle-gen:removed=0.4
// +k8s:prerelease-lifecycle-gen:replacement=operator.example.com,v1alpha2,NginxOperatorList

// NginxOperatorList is a list of NginxOperators.
type NginxOperatorList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []NginxOperator `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// NginxOperatorSpec is the desired nginx deployment.
type NginxOperatorSpec struct {
	// port is the port of the Service in front of nginx. Defaults to 80. nginx is
	// nginxinc/nginx-unprivileged (user 101, restricted security contexts), which listens
	// on 8080; v1alpha2 can say otherwise.
	// +optional
	Port *int32 `json:"port,omitempty" protobuf:"varint,1,opt,name=port"`
	// replicas is the desired number of pods. Defaults to 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	// forceRedploy rolls all pods whenever its value changes. The spelling is the
	// wire name existing manifests use.
	// +optional
	ForceRedploy string `json:"forceRedploy,omitempty" protobuf:"bytes,3,opt,name=forceRedploy"`
}

// NginxOperatorStatus is what the controller last observed.
type NginxOperatorStatus struct {
	// conditions are Available, Progressing and OperatorDegraded. At most 8.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +k8s:validation:maxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,1,rep,name=conditions"`
}
