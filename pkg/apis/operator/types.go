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

package operator

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperator asks for an nginx Deployment and a Service in its namespace.
type NginxOperator struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   NginxOperatorSpec
	Status NginxOperatorStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorList is a list of NginxOperators.
type NginxOperatorList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []NginxOperator
}

// NginxOperatorSpec is the union of the specs of every served version.
type NginxOperatorSpec struct {
	// Image is the nginx container image.
	Image string
	// Replicas is the desired number of pods; nil when QPS drives the count.
	Replicas *int32
	// Ports are the nginx container ports; the first one is v1alpha1's "port".
	Ports []corev1.ContainerPort
	// ForceRedeploy: any change rolls the pods.
	ForceRedeploy string
	// Resources of the nginx container.
	Resources corev1.ResourceRequirements
	// Env of the nginx container.
	Env []corev1.EnvVar
	// Service describes the Service in front of the pods.
	Service *ServiceSpec
	// QPS, when set, derives the replica count from the load to serve.
	QPS *QPSSpec
	// Config is nginx.conf, inline or from a ConfigMap key; the image's own when nil.
	Config *ConfigSource
	// Files are ConfigMaps mounted as directories of files.
	Files []ConfigMapFiles
	// TLS are kubernetes.io/tls Secrets mounted under TLSDirectory.
	TLS []TLSSecret
	// HealthcheckPath, when set, makes the probes HTTP GETs of this path.
	HealthcheckPath string
	// SecurityContext of the nginx container.
	SecurityContext *corev1.SecurityContext
	// Pod carries placement, identity and pod-level settings.
	Pod *PodOptions
	// PodDisruptionBudget, when set, asks for a PodDisruptionBudget of the nginx pods.
	PodDisruptionBudget *PodDisruptionBudgetSpec
	// Scratch are emptyDir volumes of a bounded size, counted in the container's resources.
	Scratch []ScratchVolume
	// Metrics says whether the pods export nginx's metrics; on when nil.
	Metrics *MetricsSpec
	// ContentUpdate is how new content reaches running pods: Reload, Rollout, or "" for
	// Reload where the pods can reload, else Rollout.
	ContentUpdate ContentUpdatePolicy
	// RevisionHistoryLimit is how many revisions before the newest are kept; nil keeps
	// DefaultRevisionHistoryLimit.
	RevisionHistoryLimit *int32
	// Canary stages a new inline configuration in Reload mode; on when nil.
	Canary *CanarySpec
}

// CanarySpec sets the staged reload; nil fields take the defaults of package canary.
type CanarySpec struct {
	Enabled           *bool
	Pods              *intstr.IntOrString
	AnalysisSeconds   *int32
	MaxErrorPercent   *int32
	MaxLatencyPercent *int32
	MinRequests       *int32
}

// ContentUpdatePolicy is how new content reaches running pods.
type ContentUpdatePolicy string

// The content update policies (operand.ContentUpdateReload and ContentUpdateRollout).
const (
	ContentUpdateReload  ContentUpdatePolicy = "Reload"
	ContentUpdateRollout ContentUpdatePolicy = "Rollout"
)

// MetricsSpec switches the metrics exporter sidecar on or off.
type MetricsSpec struct {
	Enabled *bool
}

// ScratchVolume is an emptyDir volume of SizeLimit at MountPath, on the node's disk or,
// with Medium Memory, in a tmpfs.
type ScratchVolume struct {
	Name      string
	MountPath string
	Medium    corev1.StorageMedium
	SizeLimit resource.Quantity
}

// ConfigSource is nginx.conf, given inline or by reference; exactly one is set.
type ConfigSource struct {
	Inline          string
	ConfigMapKeyRef *ConfigMapKeyReference
}

// ConfigMapKeyReference names one key of a ConfigMap in the NginxOperator's namespace.
type ConfigMapKeyReference struct {
	Name string
	Key  string
}

// ConfigMapFiles mounts every key of a ConfigMap as a file in MountPath.
type ConfigMapFiles struct {
	ConfigMapName string
	MountPath     string
}

// TLSSecret is a kubernetes.io/tls Secret mounted at TLSDirectory/SecretName.
type TLSSecret struct {
	SecretName string
}

// PodOptions are the pod template's settings beyond the nginx container.
type PodOptions struct {
	Labels                    map[string]string
	Annotations               map[string]string
	NodeSelector              map[string]string
	Tolerations               []corev1.Toleration
	Affinity                  *corev1.Affinity
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
	PriorityClassName         string
	ImagePullSecrets          []corev1.LocalObjectReference
	ServiceAccountName        string
	SecurityContext           *corev1.PodSecurityContext
}

// PodDisruptionBudgetSpec sets exactly one of MinAvailable and MaxUnavailable.
type PodDisruptionBudgetSpec struct {
	MinAvailable   *intstr.IntOrString
	MaxUnavailable *intstr.IntOrString
}

// ServiceSpec describes the Service created for an NginxOperator.
type ServiceSpec struct {
	Type  ServiceType
	Ports []ServicePort
	// Labels and Annotations are added to the Service's own.
	Labels      map[string]string
	Annotations map[string]string
	// ExternalTrafficPolicy for NodePort and LoadBalancer Services.
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy
	// LoadBalancerSourceRanges restrict a LoadBalancer Service to these CIDRs.
	LoadBalancerSourceRanges []string
}

// ServiceType is ClusterIP, NodePort or LoadBalancer.
type ServiceType string

// The supported Service types.
const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// ServicePort exposes one named container port.
type ServicePort struct {
	// Name is the name of the container port this service port targets.
	Name string
	// Port is the port the Service listens on.
	Port int32
	// NodePort is the node port for NodePort and LoadBalancer services; allocated when nil.
	NodePort *int32
}

// QPSSpec sizes the Deployment from the load it must serve.
type QPSSpec struct {
	// SinglePodQPS is the load one pod can serve.
	SinglePodQPS int32
	// TotalQPS is the load to serve; replicas = ceil(TotalQPS / SinglePodQPS).
	TotalQPS int32
}

// NginxOperatorStatus is the union of the statuses of every served version.
type NginxOperatorStatus struct {
	ObservedGeneration int64
	Replicas           int32
	ReadyReplicas      int32
	AvailableReplicas  int32
	// Selector is the label selector of the pods, in string form, for /scale.
	Selector string
	// RealQPS is SinglePodQPS times the ready pods as observed.
	RealQPS    *int64
	Conditions []metav1.Condition
	// Revision is the number of the newest NginxOperatorRevision, named
	// RevisionName(name, Revision); 0 while the spec has never mounted content. Only the
	// apiserver sets it, in the write that records the revision.
	Revision int64
	// ConfigMapDigests are the digests of the data the pods mount from ConfigMaps, as the
	// controller last read it; a change of one is a revision.
	ConfigMapDigests []ConfigMapDigest
	// Canary is the staged reload of the newest configuration, as the controller set it.
	Canary *CanaryStatus
}

// CanaryPhase is where a staged reload is.
type CanaryPhase string

// The phases of a staged reload.
const (
	CanaryAnalyzing CanaryPhase = "Analyzing"
	CanaryPromoted  CanaryPhase = "Promoted"
	CanaryFailed    CanaryPhase = "Failed"
)

// CanaryStatus is one staged reload.
type CanaryStatus struct {
	Hash              string
	Revision          int64
	Phase             CanaryPhase
	StartTime         *metav1.Time
	AnalysisStartTime *metav1.Time
	Pods              []string
	Message           string
}

// ConfigMapDigest is the digest of what the pods mount of one ConfigMap: one key of it
// (spec.config) or all (spec.files, Key "").
type ConfigMapDigest struct {
	Name   string
	Key    string
	Digest string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRevision is one content an NginxOperator's spec asked its pods to load:
// immutable, recorded by the apiserver in the write that made it.
type NginxOperatorRevision struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Revision is the number, counting from 1 for the NginxOperator's first content.
	Revision int64
	// NginxOperator is the name of the NginxOperator, in the same namespace.
	NginxOperator string
	// Requester is the user whose write made the revision.
	Requester string
	// Reason is Created, Updated, RolledBack, Adopted or ConfigMapChanged.
	Reason RevisionReason
	// RolledBackTo is the revision whose content a rollback restored.
	RolledBackTo int64
	// Changed lists the content fields that differ from the revision before.
	Changed []string
	// ContentHash is the SHA-256 of Content and ConfigMapDigests, to compare revisions.
	ContentHash string
	// Content is what the spec mounted.
	Content RevisionContent
	// ConfigMapDigests are the digests of the ConfigMaps' data at a ConfigMapChanged
	// revision.
	ConfigMapDigests []ConfigMapDigest
}

// RevisionReason is why a revision was recorded.
type RevisionReason string

// The reasons of a revision.
const (
	RevisionCreated    RevisionReason = "Created"
	RevisionUpdated    RevisionReason = "Updated"
	RevisionRolledBack RevisionReason = "RolledBack"
	// RevisionAdopted is the content an NginxOperator had when it was stored before
	// revisions were recorded, recorded at its first content change since.
	RevisionAdopted RevisionReason = "Adopted"
	// RevisionConfigMapChanged is a change of the data of a ConfigMap the spec mounts,
	// as the controller read it.
	RevisionConfigMapChanged RevisionReason = "ConfigMapChanged"
)

// RevisionContent holds the content fields of a spec.
type RevisionContent struct {
	Config *ConfigSource
	Files  []ConfigMapFiles
	TLS    []TLSSecret
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRevisionList is a list of NginxOperatorRevisions.
type NginxOperatorRevisionList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []NginxOperatorRevision
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRollback asks, through the rollback subresource, for the spec's content
// fields to be set back to a revision's.
type NginxOperatorRollback struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// ToRevision is the revision to go back to; 0 means the one before the newest.
	ToRevision int64
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NginxOperatorRendered is what the pods of an NginxOperator load, read from its
// Deployment as the controller wrote it: every file nginx finds in what the pod mounts.
type NginxOperatorRendered struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Deployment names the Deployment read, and Generation its metadata.generation.
	Deployment string
	Generation int64
	// Files are the files of the nginx container's mounts, by path.
	Files []RenderedFile
	// Message says why there are no files (no Deployment yet, or not this object's).
	Message string
}

// RenderedFile is one file of the nginx container.
type RenderedFile struct {
	Path     string
	Source   string
	Content  string
	Withheld string
}
