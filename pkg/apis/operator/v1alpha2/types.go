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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=Rollback,verb=create,subresource=rollback,input=NginxOperatorRollback,result=NginxOperator
// +genclient:method=GetRendered,verb=get,subresource=rendered,result=NginxOperatorRendered
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
	// resources of the nginx container; at most 16 names in limits and in requests.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,5,opt,name=resources"`
	// env of the nginx container. At most 128.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +k8s:validation:maxItems=128
	Env []corev1.EnvVar `json:"env,omitempty" protobuf:"bytes,6,rep,name=env"`
	// service describes the Service in front of the pods. Defaults to a ClusterIP
	// Service with one port per container port.
	// +optional
	Service *ServiceSpec `json:"service,omitempty" protobuf:"bytes,7,opt,name=service"`
	// qps, when set, sizes the Deployment to ceil(totalQPS / singlePodQPS) pods.
	// +optional
	QPS *QPSSpec `json:"qps,omitempty" protobuf:"bytes,8,opt,name=qps"`
	// config is nginx's main configuration file, mounted at /etc/nginx/nginx.conf: given
	// inline or taken from a ConfigMap key. When unset the image's own file is used. A
	// change of the content rolls the pods.
	// +optional
	Config *ConfigSource `json:"config,omitempty" protobuf:"bytes,9,opt,name=config"`
	// files mounts ConfigMaps as directories: every key becomes a file in mountPath, e.g.
	// server blocks in /etc/nginx/conf.d or content in /usr/share/nginx/html. A change of
	// the content rolls the pods. At most 20.
	// +optional
	// +listType=map
	// +listMapKey=mountPath
	// +k8s:validation:maxItems=20
	Files []ConfigMapFiles `json:"files,omitempty" protobuf:"bytes,10,rep,name=files"`
	// tls mounts kubernetes.io/tls Secrets read-only at /etc/nginx/tls/<secretName>/
	// (tls.crt and tls.key) for the configuration to use. When set and spec.ports is
	// unset, an https port is added to the defaults. A renewed certificate rolls the
	// pods. At most 20.
	// +optional
	// +listType=map
	// +listMapKey=secretName
	// +k8s:validation:maxItems=20
	TLS []TLSSecret `json:"tls,omitempty" protobuf:"bytes,11,rep,name=tls"`
	// healthcheckPath, when set, makes the readiness and liveness probes HTTP GETs of
	// this path on the first TCP port (the default is a TCP connect). Must start with /.
	// +optional
	HealthcheckPath string `json:"healthcheckPath,omitempty" protobuf:"bytes,12,opt,name=healthcheckPath"`
	// securityContext of the nginx container. An NginxOperator created without an image
	// gets one the restricted Pod Security standard admits. At most 64 capabilities to
	// add and to drop.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty" protobuf:"bytes,13,opt,name=securityContext"`
	// pod holds the pod template's settings: labels and annotations, placement, identity
	// and the pod security context.
	// +optional
	Pod *PodOptions `json:"pod,omitempty" protobuf:"bytes,14,opt,name=pod"`
	// podDisruptionBudget, when set, makes the controller keep a PodDisruptionBudget for
	// the nginx pods.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty" protobuf:"bytes,15,opt,name=podDisruptionBudget"`
	// scratch are writable emptyDir volumes mounted in the nginx container, e.g. for
	// proxy_cache_path or the *_temp_path directories. Each one's sizeLimit is added to the
	// container's requests (and to its limits, where spec.resources sets one): memory for
	// medium Memory, ephemeral-storage otherwise. The content does not survive the pod. At
	// most 4.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +k8s:validation:maxItems=4
	Scratch []ScratchVolume `json:"scratch,omitempty" protobuf:"bytes,16,rep,name=scratch"`
	// metrics exports nginx's metrics for Prometheus from every pod: nginx serves its
	// stub_status page on the pod's loopback (127.0.0.1:8079) from a server the controller
	// mounts at /etc/nginx/nginx-operator/status.conf, and a sidecar, nginx-exporter, serves
	// them on the container port named metrics (9113). A spec.config must include
	// /etc/nginx/nginx-operator/*.conf in its http block; without spec.config (and unless
	// spec.files replaces /etc/nginx/conf.d) it is also mounted in /etc/nginx/conf.d, which
	// the official images' own nginx.conf includes. On by default; turning it on or off
	// rolls the pods.
	// +optional
	Metrics *MetricsSpec `json:"metrics,omitempty" protobuf:"bytes,17,opt,name=metrics"`
	// contentUpdate says how a change of the content spec.config, spec.files and spec.tls
	// mount reaches running pods. "Reload": the pods stay; the kubelet refreshes their
	// volumes at once (the controller annotates each pod with the content it wants) and the
	// nginx-exporter sidecar, sharing the pod's process namespace and running as nginx's
	// user, asks nginx to re-read its configuration once every volume holds it; nginx keeps
	// serving what it had if it rejects the new configuration, and status says why.
	// "Rollout": the Deployment replaces the pods. Unset: Reload where the pods can reload
	// (spec.metrics on, and nginx's user known and not root: spec.securityContext or
	// spec.pod.securityContext sets runAsUser, or the image is the default one), else
	// Rollout; it is not stored, so a later change of the image or the user moves it.
	// A spec that mounts no content has nothing to reload. Switching rolls the pods once.
	// +optional
	ContentUpdate ContentUpdatePolicy `json:"contentUpdate,omitempty" protobuf:"bytes,18,opt,name=contentUpdate,casttype=ContentUpdatePolicy"`
	// revisionHistoryLimit is how many NginxOperatorRevisions before the newest are kept
	// (0 to 100); 10 when unset. Each change of what config, files and tls mount is one
	// revision, and the rollback subresource sets those fields back to a kept one.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty" protobuf:"varint,19,opt,name=revisionHistoryLimit"`
	// canary stages a new inline configuration (spec.config.inline) in Reload mode: a
	// share of the pods loads it first and is compared with the pods still on the
	// previous one, by the 5xx share and latency nginx's access log shows and by the
	// health path requested in the pod after the reload. Pass: every pod loads it.
	// Fail: the canary pods go back, status.canary says why with the figures, and the
	// configuration is not tried again until it changes. On by default in Reload mode
	// with two pods or more; Rollout mode keeps the Deployment's own pacing.
	// +optional
	Canary *CanarySpec `json:"canary,omitempty" protobuf:"bytes,20,opt,name=canary"`
}

// CanarySpec sets the staged reload of a new configuration. Unset fields take the
// defaults given; none is stored.
type CanarySpec struct {
	// enabled stages new configurations; true when unset. false: every pod loads a new
	// configuration at once.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// pods is how many pods load a new configuration first: a number, or a percentage
	// of the pods rounded up; always at least one and fewer than all. Default 25%.
	// +optional
	Pods *intstr.IntOrString `json:"pods,omitempty" protobuf:"bytes,2,opt,name=pods"`
	// analysisSeconds is how long the canary pods are compared before the rest follow
	// (5 to 3600). Default 30.
	// +optional
	AnalysisSeconds *int32 `json:"analysisSeconds,omitempty" protobuf:"varint,3,opt,name=analysisSeconds"`
	// maxErrorPercent is how many percentage points the canary pods' share of 5xx
	// answers may exceed the other pods' (0 to 100). Default 5.
	// +optional
	MaxErrorPercent *int32 `json:"maxErrorPercent,omitempty" protobuf:"varint,4,opt,name=maxErrorPercent"`
	// maxLatencyPercent is how many percent the canary pods' 90th percentile latency may
	// exceed the other pods' (0 to 10000); a difference under 50ms always passes.
	// Default 100.
	// +optional
	MaxLatencyPercent *int32 `json:"maxLatencyPercent,omitempty" protobuf:"varint,5,opt,name=maxLatencyPercent"`
	// minRequests is how many requests the canary pods must answer in the window for
	// the comparison to count (1 to 1000000). With fewer, the window is extended up to
	// four times, then the configuration is promoted on the health check alone, with a
	// Warning event that says so. Default 20.
	// +optional
	MinRequests *int32 `json:"minRequests,omitempty" protobuf:"varint,6,opt,name=minRequests"`
}

// ContentUpdatePolicy is how new content reaches running pods.
// +enum
type ContentUpdatePolicy string

const (
	// ContentUpdateReload reloads nginx in the running pods.
	ContentUpdateReload ContentUpdatePolicy = "Reload"
	// ContentUpdateRollout replaces the pods.
	ContentUpdateRollout ContentUpdatePolicy = "Rollout"
)

// MetricsSpec switches the metrics exporter on or off.
type MetricsSpec struct {
	// enabled runs the exporter sidecar and mounts nginx's status server. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
}

// ScratchVolume is an emptyDir volume of a bounded size at mountPath.
type ScratchVolume struct {
	// name of the volume, a DNS label of at most 55 characters, unique in spec.scratch.
	// The pod's volume is called scratch-<name>.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// mountPath is the absolute directory nginx writes to. It may not contain, or lie
	// within, /etc/nginx/nginx.conf, /etc/nginx/tls, a spec.files mountPath or another
	// scratch volume.
	MountPath string `json:"mountPath" protobuf:"bytes,2,opt,name=mountPath"`
	// medium is "" (the node's disk, counted as ephemeral-storage) or "Memory" (a tmpfs,
	// counted as memory).
	// +optional
	Medium corev1.StorageMedium `json:"medium,omitempty" protobuf:"bytes,3,opt,name=medium,casttype=k8s.io/api/core/v1.StorageMedium"`
	// sizeLimit is the most the volume may hold: at most 64Gi on disk, 16Gi in memory.
	// The kubelet evicts a pod whose volume grows beyond it.
	SizeLimit resource.Quantity `json:"sizeLimit" protobuf:"bytes,4,opt,name=sizeLimit"`
}

// ConfigSource is nginx.conf, inline or from a ConfigMap; exactly one of the two is set.
type ConfigSource struct {
	// inline is the content of nginx.conf. At most 128 KiB; a larger file belongs in a
	// ConfigMap (configMapKeyRef).
	// +optional
	// +k8s:validation:maxLength=131072
	Inline string `json:"inline,omitempty" protobuf:"bytes,1,opt,name=inline"`
	// configMapKeyRef names a key of a ConfigMap in the NginxOperator's namespace whose
	// value is nginx.conf.
	// +optional
	ConfigMapKeyRef *ConfigMapKeyReference `json:"configMapKeyRef,omitempty" protobuf:"bytes,2,opt,name=configMapKeyRef"`
}

// ConfigMapKeyReference names one key of a ConfigMap in the same namespace.
type ConfigMapKeyReference struct {
	// name of the ConfigMap.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// key in the ConfigMap's data.
	Key string `json:"key" protobuf:"bytes,2,opt,name=key"`
}

// ConfigMapFiles mounts every key of a ConfigMap as a file in a directory.
type ConfigMapFiles struct {
	// configMapName is the ConfigMap in the NginxOperator's namespace.
	ConfigMapName string `json:"configMapName" protobuf:"bytes,1,opt,name=configMapName"`
	// mountPath is the absolute directory the files appear in. It replaces what the
	// image has there.
	MountPath string `json:"mountPath" protobuf:"bytes,2,opt,name=mountPath"`
}

// TLSSecret names a kubernetes.io/tls Secret in the NginxOperator's namespace.
type TLSSecret struct {
	// secretName is mounted at /etc/nginx/tls/<secretName>/.
	SecretName string `json:"secretName" protobuf:"bytes,1,opt,name=secretName"`
}

// PodOptions are the pod template's settings beyond the nginx container.
type PodOptions struct {
	// labels are added to the pods; they may not change the labels the controller
	// selects its pods by (app.kubernetes.io/name, instance and managed-by). At most 64.
	// +optional
	// +k8s:validation:maxProperties=64
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,1,rep,name=labels"`
	// annotations are added to the pods. At most 64.
	// +optional
	// +k8s:validation:maxProperties=64
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,2,rep,name=annotations"`
	// nodeSelector of the pods. At most 16.
	// +optional
	// +k8s:validation:maxProperties=16
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,3,rep,name=nodeSelector"`
	// tolerations of the pods. At most 64.
	// +optional
	// +listType=atomic
	// +k8s:validation:maxItems=64
	Tolerations []corev1.Toleration `json:"tolerations,omitempty" protobuf:"bytes,4,rep,name=tolerations"`
	// affinity of the pods. Each list of terms holds at most 16, each selector at most
	// 16 requirements of at most 64 values. A required pod anti-affinity term may only
	// select pods of the NginxOperator's own namespace (no namespaceSelector, no other
	// namespace in namespaces).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty" protobuf:"bytes,5,opt,name=affinity"`
	// topologySpreadConstraints of the pods. A constraint without a labelSelector
	// selects the NginxOperator's own pods. At most 16.
	// +optional
	// +listType=atomic
	// +k8s:validation:maxItems=16
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty" protobuf:"bytes,6,rep,name=topologySpreadConstraints"`
	// priorityClassName of the pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty" protobuf:"bytes,7,opt,name=priorityClassName"`
	// imagePullSecrets of the pods. At most 16.
	// +optional
	// +listType=atomic
	// +k8s:validation:maxItems=16
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty" protobuf:"bytes,8,rep,name=imagePullSecrets"`
	// serviceAccountName the pods run as; the namespace's default when unset.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,9,opt,name=serviceAccountName"`
	// securityContext of the pods. An NginxOperator created without an image gets one
	// the restricted Pod Security standard admits. At most 32 sysctls and 64
	// supplementalGroups.
	// +optional
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty" protobuf:"bytes,10,opt,name=securityContext"`
}

// PodDisruptionBudgetSpec sets exactly one of minAvailable and maxUnavailable.
type PodDisruptionBudgetSpec struct {
	// minAvailable pods, a number or a percentage; not 100%, which would block node
	// drains (a number at or above the replica count is accepted with a warning).
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty" protobuf:"bytes,1,opt,name=minAvailable"`
	// maxUnavailable pods, a number or a percentage; not 0 or 0%, which would block
	// node drains.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty" protobuf:"bytes,2,opt,name=maxUnavailable"`
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
	// labels are added to the Service's own. At most 64.
	// +optional
	// +k8s:validation:maxProperties=64
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,3,rep,name=labels"`
	// annotations of the Service, e.g. for a cloud load balancer. At most 64.
	// +optional
	// +k8s:validation:maxProperties=64
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,4,rep,name=annotations"`
	// externalTrafficPolicy (Cluster or Local) of a NodePort or LoadBalancer Service.
	// +optional
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty" protobuf:"bytes,5,opt,name=externalTrafficPolicy,casttype=k8s.io/api/core/v1.ServiceExternalTrafficPolicy"`
	// loadBalancerSourceRanges restrict a LoadBalancer Service to these CIDRs. At most 128.
	// +optional
	// +listType=atomic
	// +k8s:validation:maxItems=128
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty" protobuf:"bytes,6,rep,name=loadBalancerSourceRanges"`
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
	// conditions are Ready, Available, Progressing, OperatorDegraded, Reconciling and
	// Stalled. At most 8.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +k8s:validation:maxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty" protobuf:"bytes,7,rep,name=conditions"`
	// revision is the number of the newest NginxOperatorRevision (named
	// <name>-<revision>); 0 while the spec has never mounted content. Set by the
	// apiserver in the write that records the revision, never by a client.
	// +optional
	Revision int64 `json:"revision,omitempty" protobuf:"varint,8,opt,name=revision"`
	// configMapDigests are the digests of the data the pods mount from ConfigMaps
	// (spec.config.configMapKeyRef's key, every key of a spec.files ConfigMap), as the
	// controller last read it. A change of one records a revision, reason
	// ConfigMapChanged. At most 21.
	// +optional
	// +listType=atomic
	// +k8s:validation:maxItems=21
	ConfigMapDigests []ConfigMapDigest `json:"configMapDigests,omitempty" protobuf:"bytes,9,rep,name=configMapDigests"`
	// canary is the staged reload of the newest configuration (spec.canary): running,
	// or how the last one ended. Set by the controller.
	// +optional
	Canary *CanaryStatus `json:"canary,omitempty" protobuf:"bytes,10,opt,name=canary"`
}

// CanaryPhase is where a staged reload is.
// +enum
type CanaryPhase string

// The phases of a staged reload.
const (
	// CanaryAnalyzing: the canary pods load the configuration, or are compared.
	CanaryAnalyzing CanaryPhase = "Analyzing"
	// CanaryPromoted: every pod was asked to load it.
	CanaryPromoted CanaryPhase = "Promoted"
	// CanaryFailed: the canary pods were taken back; the configuration is not tried
	// again until it changes.
	CanaryFailed CanaryPhase = "Failed"
)

// CanaryStatus is one staged reload.
type CanaryStatus struct {
	// hash is the start of the SHA-256 of the staged nginx.conf, in hex.
	Hash string `json:"hash" protobuf:"bytes,1,opt,name=hash"`
	// revision is the NginxOperatorRevision staged (status.revision when it started).
	// +optional
	Revision int64 `json:"revision,omitempty" protobuf:"varint,2,opt,name=revision"`
	// phase is Analyzing, Promoted or Failed.
	Phase CanaryPhase `json:"phase" protobuf:"bytes,3,opt,name=phase,casttype=CanaryPhase"`
	// startTime is when the canary pods were asked to load it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty" protobuf:"bytes,4,opt,name=startTime"`
	// analysisStartTime is when every canary pod had loaded it: the comparison's
	// window starts there.
	// +optional
	AnalysisStartTime *metav1.Time `json:"analysisStartTime,omitempty" protobuf:"bytes,5,opt,name=analysisStartTime"`
	// pods are the canary pods. At most 100.
	// +optional
	// +listType=atomic
	// +k8s:validation:maxItems=100
	Pods []string `json:"pods,omitempty" protobuf:"bytes,6,rep,name=pods"`
	// message says why it ended so, with the figures compared.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,7,opt,name=message"`
}

// ConfigMapDigest is the digest of what the pods mount of one ConfigMap.
type ConfigMapDigest struct {
	// name of the ConfigMap.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// key is the one key mounted (spec.config.configMapKeyRef); empty for every key
	// (spec.files).
	// +optional
	Key string `json:"key,omitempty" protobuf:"bytes,2,opt,name=key"`
	// digest is the start of the SHA-256 of the mounted data, in hex.
	Digest string `json:"digest" protobuf:"bytes,3,opt,name=digest"`
}

// +genclient
// +genclient:onlyVerbs=get,list,watch
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRevision is one content an NginxOperator's spec asked its pods to load:
// what spec.config, spec.files and spec.tls mounted, who wrote it and when. The apiserver
// records it in the write that changed the content and keeps the newest
// spec.revisionHistoryLimit+1; clients only read revisions.
type NginxOperatorRevision struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// revision is the number, counting from 1 for the NginxOperator's first content.
	Revision int64 `json:"revision" protobuf:"varint,2,opt,name=revision"`
	// nginxOperator is the name of the NginxOperator, in the same namespace.
	NginxOperator string `json:"nginxOperator" protobuf:"bytes,3,opt,name=nginxOperator"`
	// requester is the user whose write made the revision.
	// +optional
	Requester string `json:"requester,omitempty" protobuf:"bytes,4,opt,name=requester"`
	// reason is Created, Updated, RolledBack (by the rollback subresource), Adopted or
	// ConfigMapChanged.
	Reason RevisionReason `json:"reason" protobuf:"bytes,5,opt,name=reason,casttype=RevisionReason"`
	// rolledBackTo is the revision whose content a rollback restored.
	// +optional
	RolledBackTo int64 `json:"rolledBackTo,omitempty" protobuf:"varint,6,opt,name=rolledBackTo"`
	// changed lists the content fields that differ from the revision before.
	// +optional
	// +listType=atomic
	Changed []string `json:"changed,omitempty" protobuf:"bytes,7,rep,name=changed"`
	// contentHash is the SHA-256 of content and configMapDigests, to compare revisions.
	ContentHash string `json:"contentHash" protobuf:"bytes,8,opt,name=contentHash"`
	// content is what the spec mounted: the inline nginx.conf itself, and the names of
	// the ConfigMaps and Secrets it referenced (never their data).
	Content RevisionContent `json:"content" protobuf:"bytes,9,opt,name=content"`
	// configMapDigests are the digests of the mounted ConfigMaps' data, at a
	// ConfigMapChanged revision: the data itself is the cluster's, not copied here.
	// +optional
	// +listType=atomic
	ConfigMapDigests []ConfigMapDigest `json:"configMapDigests,omitempty" protobuf:"bytes,10,rep,name=configMapDigests"`
}

// RevisionReason is why a revision was recorded.
// +enum
type RevisionReason string

// The reasons of a revision.
const (
	RevisionCreated    RevisionReason = "Created"
	RevisionUpdated    RevisionReason = "Updated"
	RevisionRolledBack RevisionReason = "RolledBack"
	// RevisionAdopted is the content an NginxOperator stored before revisions existed
	// had, recorded at its first content change since (no requester is known).
	RevisionAdopted RevisionReason = "Adopted"
	// RevisionConfigMapChanged is a change of the data of a ConfigMap the spec mounts,
	// as the controller read it; no requester is known.
	RevisionConfigMapChanged RevisionReason = "ConfigMapChanged"
)

// RevisionContent holds the content fields of a spec.
type RevisionContent struct {
	// config as in spec.config.
	// +optional
	Config *ConfigSource `json:"config,omitempty" protobuf:"bytes,1,opt,name=config"`
	// files as in spec.files.
	// +optional
	// +listType=atomic
	Files []ConfigMapFiles `json:"files,omitempty" protobuf:"bytes,2,rep,name=files"`
	// tls as in spec.tls.
	// +optional
	// +listType=atomic
	TLS []TLSSecret `json:"tls,omitempty" protobuf:"bytes,3,rep,name=tls"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRevisionList is a list of NginxOperatorRevisions.
type NginxOperatorRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []NginxOperatorRevision `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRollback, posted to an NginxOperator's rollback subresource, sets the
// spec's config, files and tls back to those of a kept revision, as "kubectl rollout
// undo" sets a Deployment's template back. It is authorized as an update of the
// NginxOperator, and the result records a new revision.
type NginxOperatorRollback struct {
	metav1.TypeMeta `json:",inline"`
	// metadata.name, when set, must be the NginxOperator's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// toRevision is the revision to go back to; 0 or unset means the one before the
	// newest.
	// +optional
	ToRevision int64 `json:"toRevision,omitempty" protobuf:"varint,2,opt,name=toRevision"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRendered, read from an NginxOperator's rendered subresource, is what its
// pods load: every file of the nginx container's mounts, resolved from the NginxOperator's
// Deployment as the controller wrote it. A ConfigMap's data is shown only to a reader who
// may get that ConfigMap; a Secret's never.
type NginxOperatorRendered struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// deployment names the Deployment read.
	// +optional
	Deployment string `json:"deployment,omitempty" protobuf:"bytes,2,opt,name=deployment"`
	// generation is the Deployment's metadata.generation that was read.
	// +optional
	Generation int64 `json:"generation,omitempty" protobuf:"varint,3,opt,name=generation"`
	// files are the files of the nginx container's mounts, by path.
	// +optional
	// +listType=atomic
	Files []RenderedFile `json:"files,omitempty" protobuf:"bytes,4,rep,name=files"`
	// message says why there are no files: no Deployment yet, or one this NginxOperator
	// does not control.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// RenderedFile is one file of the nginx container.
type RenderedFile struct {
	// path in the nginx container.
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
	// source is where the file comes from, e.g. "ConfigMap web-nginx-conf, key nginx.conf".
	Source string `json:"source" protobuf:"bytes,2,opt,name=source"`
	// content of the file, when its source may be shown to the reader.
	// +optional
	Content string `json:"content,omitempty" protobuf:"bytes,3,opt,name=content"`
	// withheld says why content is empty: a Secret, a ConfigMap the reader may not get,
	// the image's own file.
	// +optional
	Withheld string `json:"withheld,omitempty" protobuf:"bytes,4,opt,name=withheld"`
}
