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

// Condition types of status.conditions.
const (
	// ConditionReady is True when the status describes the current generation and its
	// pods are available: the summary kstatus-based tools (Flux, Argo CD, kpt) and
	// `kubectl wait --for=condition=Ready` read. Its reason says what it waits for.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the controller works towards the spec and
	// expects to get there: a rollout in progress, pods starting.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when getting there needs someone to act: a refused
	// Deployment or Service, a same-named object, pods that cannot run.
	ConditionStalled = "Stalled"
	// ConditionAvailable is True while the Deployment has the minimum of pods available.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while the Deployment rolls out the current spec.
	ConditionProgressing = "Progressing"
	// ConditionOperatorDegraded is True while the Deployment or the Service is not
	// what the spec asks for; its reason says which and why.
	ConditionOperatorDegraded = "OperatorDegraded"
)

// Reasons of the conditions.
const (
	// ReasonOperatorSucceeded: the Deployment and the Service are as specified.
	ReasonOperatorSucceeded = "OperatorSucceeded"
	// ReasonOperatorResourceNotAvailable: a same-named Deployment or Service exists that
	// this NginxOperator does not control; it is left alone.
	ReasonOperatorResourceNotAvailable = "OperatorResourceNotAvailable"
	// ReasonOperandDeploymentNotAvailable: the Deployment does not exist yet or has too
	// few available pods.
	ReasonOperandDeploymentNotAvailable = "OperandDeploymentNotAvailable"
	// ReasonOperandDeploymentFailed: the API server refused the Deployment (the message
	// is the server's), or its rollout stopped making progress.
	ReasonOperandDeploymentFailed = "OperandDeploymentFailed"
	// ReasonOperandServiceFailed: the API server refused the Service, for example
	// because a requested nodePort is already allocated; the message is the server's.
	ReasonOperandServiceFailed = "OperandServiceFailed"
	// ReasonRolloutInProgress (Progressing True): the Deployment is being created or is
	// rolling out the current spec.
	ReasonRolloutInProgress = "RolloutInProgress"
	// ReasonRolloutComplete (Progressing False): the Deployment runs the current spec on
	// all its pods.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonReferenceNotFound: a ConfigMap or key that spec.config or spec.files mounts
	// does not exist; the pods wait for it. (A Secret of spec.tls that is missing or of
	// another type is refused with OperandDeploymentFailed, in the same words either way.)
	ReasonReferenceNotFound = "ReferenceNotFound"
	// ReasonPodsUnschedulable: the scheduler places no node for some pods; the message
	// is the scheduler's.
	ReasonPodsUnschedulable = "PodsUnschedulable"
	// ReasonImagePullFailed: the kubelet cannot pull the image (ErrImagePull,
	// ImagePullBackOff, InvalidImageName).
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonContainerConfigFailed: the kubelet cannot create the container from its
	// configuration, e.g. a missing ConfigMap or a root image with runAsNonRoot.
	ReasonContainerConfigFailed = "ContainerConfigFailed"
	// ReasonContainerCrashing: nginx exits and the kubelet restarts it (CrashLoopBackOff).
	ReasonContainerCrashing = "ContainerCrashing"
	// ReasonContainerNotReady: nginx runs but its readiness probe does not pass.
	ReasonContainerNotReady = "ContainerNotReady"
	// ReasonConfigurationRejected (Stalled True, contentUpdate Reload): nginx refused to
	// reload the new content in some pods and serves the previous one; the message
	// quotes nginx per pod.
	ReasonConfigurationRejected = "ConfigurationRejected"
	// ReasonReloadInProgress (Progressing True, contentUpdate Reload): some pods have not
	// loaded the new content yet.
	ReasonReloadInProgress = "ReloadInProgress"
	// ReasonCanaryAnalyzing (Progressing True, spec.canary): a new configuration is
	// staged on some pods and compared with the others.
	ReasonCanaryAnalyzing = "CanaryAnalyzing"
	// ReasonCanaryFailed (Stalled True, spec.canary): the staged configuration was taken
	// back from the canary pods; status.canary.message says why, with the figures.
	ReasonCanaryFailed = "CanaryFailed"
)
