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
)
