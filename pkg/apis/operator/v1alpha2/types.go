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

package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperator runs nginx as a Deployment with a Service in front of it.
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

// NginxOperatorList is a list of NginxOperators.
type NginxOperatorList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []NginxOperator `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// NginxOperatorSpec is the desired nginx deployment.
type NginxOperatorSpec struct {
	// image is the nginx container image. Defaults to a pinned nginx release.
	// +optional
	Image string `json:"image,omitempty" protobuf:"bytes,1,opt,name=image"`
	// replicas is the desired number of pods. Defaults to 1 unless qps is set;
	// must be unset when qps is set.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	// ports are the container ports of nginx. Every port needs a unique name.
	// Defaults to one port named http on 80/TCP. At most 100.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +k8s:validation:maxItems=100
	Ports []corev1.ContainerPort `json:"ports,omitempty" protobuf:"bytes,3,rep,name=ports"`
	// forceRedeploy rolls all pods whenever its value changes.
	// +optional
	ForceRedeploy string `json:"forceRedeploy,omitempty" protobuf:"bytes,4,opt,name=forceRedeploy"`
	// resources of the nginx container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,5,opt,name=resources"`
	// env of the nginx container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty" protobuf:"bytes,6,rep,name=env"`
	// service describes the Service in front of the pods. Defaults to a ClusterIP
	// Service with one port per container port.
	// +optional
	Service *ServiceSpec `json:"service,omitempty" protobuf:"bytes,7,opt,name=service"`
	// qps, when set, sizes the Deployment to ceil(totalQPS / singlePodQPS) pods.
	// +optional
	QPS *QPSSpec `json:"qps,omitempty" protobuf:"bytes,8,opt,name=qps"`
}

// ServiceSpec describes the Service created for an NginxOperator.
type ServiceSpec struct {
	// type is ClusterIP (default), NodePort or LoadBalancer.
	// +optional
	Type ServiceType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=ServiceType"`
	// ports maps container ports to Service ports. Defaults to one port per container port.
	// At most 100.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +k8s:validation:maxItems=100
	Ports []ServicePort `json:"ports,omitempty" protobuf:"bytes,2,rep,name=ports"`
}

// ServiceType is the type of the Service in front of the pods.
// +enum
type ServiceType string

// The supported Service types.
const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// ServicePort exposes one named container port.
type ServicePort struct {
	// name is the name of the container port this Service port targets.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// port the Service listens on. Defaults to the container port number.
	// +optional
	Port int32 `json:"port,omitempty" protobuf:"varint,2,opt,name=port"`
	// nodePort for NodePort and LoadBalancer Services (30000-32767); allocated when unset.
	// +optional
	NodePort *int32 `json:"nodePort,omitempty" protobuf:"varint,3,opt,name=nodePort"`
}

// QPSSpec sizes the Deployment from the load it must serve.
type QPSSpec struct {
	// singlePodQPS is the load one pod can serve; must be greater than 0.
	SinglePodQPS int32 `json:"singlePodQPS" protobuf:"varint,1,opt,name=singlePodQPS"`
	// totalQPS is the load to serve; 0 scales to zero pods.
	TotalQPS int32 `json:"totalQPS" protobuf:"varint,2,opt,name=totalQPS"`
}

// NginxOperatorStatus is what the controller last observed.
type NginxOperatorStatus struct {
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	// replicas is the number of pods of the Deployment.
	// +optional
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	// readyReplicas is the number of ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty" protobuf:"varint,3,opt,name=readyReplicas"`
	// availableReplicas is the number of available pods.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty" protobuf:"varint,4,opt,name=availableReplicas"`
	// selector is the pod label selector in string form, used by the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty" protobuf:"bytes,5,opt,name=selector"`
	// realQPS is singlePodQPS times the ready pods, as observed.
	// +optional
	RealQPS *int64 `json:"realQPS,omitempty" protobuf:"varint,6,opt,name=realQPS"`
	// conditions are Available, Progressing and OperatorDegraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,7,rep,name=conditions"`
}
