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

package controller

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/content"
)

// Observation is what one reconcile saw of the operands.
type Observation struct {
	// Deployment is the live Deployment, nil when it does not exist (yet).
	Deployment *appsv1.Deployment
	// Blocked explains why the controller could not manage an operand, e.g. a
	// same-named object it does not own; empty when nothing blocked it.
	Blocked string
	// DeploymentFailure and ServiceFailure hold the error that kept the Deployment or
	// the Service from matching the spec, usually the API server's refusal with its
	// message; empty when that step succeeded.
	DeploymentFailure, ServiceFailure string
	// ReferenceProblems are ConfigMaps, Secrets or keys the spec mounts that the pods
	// cannot mount as they are.
	ReferenceProblems []string
	// PodFailure explains pods that are created but cannot run; nil when none fails.
	PodFailure *PodFailure
	// Reload is how far the pods asked for new content are, in Reload mode.
	Reload content.ReloadObservation
	// Recheck is when to look at the pods again although nothing changed: a pod that
	// runs but is not ready yet counts as failing after NotReadyGrace.
	Recheck time.Duration
	// ConfigMaps are the digests of the mounted ConfigMaps' data, when they could be
	// read (ConfigMapsRead); status keeps the last ones otherwise.
	ConfigMaps     []v1alpha2.ConfigMapDigest
	ConfigMapsRead bool
	// Canary is the staged reload, when CanaryKnown (nil: none); status keeps the last
	// one otherwise.
	Canary      *v1alpha2.CanaryStatus
	CanaryKnown bool
}

// maxMessageLength is the longest condition message the API accepts.
const maxMessageLength = 32 * 1024

// ComputeStatus derives the status from the spec and what was observed. Conditions keep
// their lastTransitionTime while their status does not change, so an unchanged world
// computes an identical status and causes no write.
func ComputeStatus(no *v1alpha2.NginxOperator, obs Observation, now metav1.Time) v1alpha2.NginxOperatorStatus {
	status := *no.Status.DeepCopy()
	status.ObservedGeneration = no.Generation
	status.Selector = operand.Selector(no.Name)
	status.Replicas, status.ReadyReplicas, status.AvailableReplicas = 0, 0, 0
	if d := obs.Deployment; d != nil {
		status.Replicas = d.Status.Replicas
		status.ReadyReplicas = d.Status.ReadyReplicas
		status.AvailableReplicas = d.Status.AvailableReplicas
	}
	if obs.ConfigMapsRead {
		status.ConfigMapDigests = obs.ConfigMaps
	}
	if obs.CanaryKnown {
		status.Canary = obs.Canary
	}
	status.RealQPS = nil
	if no.Spec.QPS != nil {
		real := int64(no.Spec.QPS.SinglePodQPS) * int64(status.ReadyReplicas)
		status.RealQPS = &real
	}

	for _, c := range conditions(no, obs) {
		c.ObservedGeneration = no.Generation
		c.LastTransitionTime = now
		apimeta.SetStatusCondition(&status.Conditions, c)
	}
	return status
}

// conditions returns Available, Progressing and OperatorDegraded, which describe the
// operand as OpenShift-style operators do, and Ready, Reconciling and Stalled, the
// summary kstatus-based tools read.
func conditions(no *v1alpha2.NginxOperator, obs Observation) []metav1.Condition {
	s := rolloutState(obs, builders.DesiredReplicas(&no.Spec))
	s.explainPodsThatCannotRun(obs)
	s.addReload(obs.Reload)
	s.addCanary(no, obs.Canary)
	s.addRefusedService(obs)
	ready, reconciling, stalled := s.summary()
	all := []metav1.Condition{ready, s.available, s.progressing, s.degraded, reconciling, stalled}
	for i := range all {
		all[i].Message = truncate(all[i].Message, maxMessageLength)
	}
	return all
}

// phase is where an NginxOperator is on its way to its spec.
type phase int

const (
	phaseProgressing phase = iota // the controller or the cluster is still acting
	phaseStalled                  // reaching the spec needs someone to act
	phaseDone                     // the spec is reached
)

// operandState is what the three operand conditions say, and the phase the summary
// conditions are derived from.
type operandState struct {
	available, progressing, degraded metav1.Condition
	phase                            phase
}

// rolloutState describes the operand by its Deployment, or by what kept the controller
// from making it match the spec.
func rolloutState(obs Observation, desired int32) operandState {
	s := operandState{
		available:   metav1.Condition{Type: v1alpha2.ConditionAvailable},
		progressing: metav1.Condition{Type: v1alpha2.ConditionProgressing},
		degraded:    metav1.Condition{Type: v1alpha2.ConditionOperatorDegraded},
		phase:       phaseStalled,
	}
	d := obs.Deployment
	switch {
	case obs.Blocked != "":
		set(&s.available, metav1.ConditionFalse, v1alpha2.ReasonOperatorResourceNotAvailable, obs.Blocked)
		set(&s.progressing, metav1.ConditionFalse, v1alpha2.ReasonOperatorResourceNotAvailable, obs.Blocked)
		set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonOperatorResourceNotAvailable, obs.Blocked)
	case obs.DeploymentFailure != "":
		// The previous Deployment, if any, keeps serving: Available says whether it does.
		msg := obs.DeploymentFailure
		availableStatus, availableMsg := metav1.ConditionFalse, "the Deployment does not exist: "+msg
		if d != nil {
			availableStatus = conditionStatus(d, appsv1.DeploymentAvailable)
			availableMsg = fmt.Sprintf("%d pods of the Deployment as it was are available; it could not be updated: %s", d.Status.AvailableReplicas, msg)
		}
		set(&s.available, availableStatus, v1alpha2.ReasonOperandDeploymentFailed, availableMsg)
		set(&s.progressing, metav1.ConditionFalse, v1alpha2.ReasonOperandDeploymentFailed, msg)
		set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonOperandDeploymentFailed, msg)
	case d == nil:
		s.phase = phaseProgressing
		msg := "the Deployment does not exist yet"
		set(&s.available, metav1.ConditionFalse, v1alpha2.ReasonOperandDeploymentNotAvailable, msg)
		set(&s.progressing, metav1.ConditionTrue, v1alpha2.ReasonRolloutInProgress, msg)
		set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonOperandDeploymentNotAvailable, msg)
	case deploymentFailed(d) != "":
		msg := deploymentFailed(d)
		set(&s.available, conditionStatus(d, appsv1.DeploymentAvailable), v1alpha2.ReasonOperandDeploymentFailed, msg)
		set(&s.progressing, metav1.ConditionFalse, v1alpha2.ReasonOperandDeploymentFailed, msg)
		set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonOperandDeploymentFailed, msg)
	case rolledOut(d, desired):
		s.phase = phaseDone
		set(&s.available, metav1.ConditionTrue, v1alpha2.ReasonOperatorSucceeded, fmt.Sprintf("%d of %d pods available", d.Status.AvailableReplicas, desired))
		set(&s.progressing, metav1.ConditionFalse, v1alpha2.ReasonRolloutComplete, "the Deployment is rolled out")
		set(&s.degraded, metav1.ConditionFalse, v1alpha2.ReasonOperatorSucceeded, "the Deployment and the Service are as specified")
	default:
		s.phase = phaseProgressing
		msg := fmt.Sprintf("%d of %d pods ready, %d available, %d updated", d.Status.ReadyReplicas, desired, d.Status.AvailableReplicas, d.Status.UpdatedReplicas)
		if conditionStatus(d, appsv1.DeploymentAvailable) == metav1.ConditionTrue {
			set(&s.available, metav1.ConditionTrue, v1alpha2.ReasonOperatorSucceeded, msg)
			set(&s.degraded, metav1.ConditionFalse, v1alpha2.ReasonOperatorSucceeded, "the Deployment is available while it rolls out")
		} else {
			set(&s.available, metav1.ConditionFalse, v1alpha2.ReasonOperandDeploymentNotAvailable, msg)
			set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonOperandDeploymentNotAvailable, msg)
		}
		set(&s.progressing, metav1.ConditionTrue, v1alpha2.ReasonRolloutInProgress, msg)
	}
	return s
}

// explainPodsThatCannotRun: pods that cannot run, or mounts that cannot be made, explain
// a rollout that does not finish; they leave Available to the pods that do serve.
func (s *operandState) explainPodsThatCannotRun(obs Observation) {
	if s.phase == phaseDone || obs.Blocked != "" || obs.DeploymentFailure != "" {
		return
	}
	var reason, msg string
	switch {
	case len(obs.ReferenceProblems) > 0:
		reason, msg = v1alpha2.ReasonReferenceNotFound, strings.Join(obs.ReferenceProblems, "; ")
	case obs.PodFailure != nil:
		reason, msg = obs.PodFailure.Reason, obs.PodFailure.Message
	default:
		return
	}
	s.phase = phaseStalled
	set(&s.degraded, metav1.ConditionTrue, reason, msg)
	if s.available.Status != metav1.ConditionTrue {
		set(&s.available, s.available.Status, reason, msg)
	}
}

// addReload: content nginx rejected stalls the NginxOperator (its pods serve the previous
// content; the writer must fix the new one); content not loaded yet keeps it progressing.
func (s *operandState) addReload(r content.ReloadObservation) {
	switch {
	case s.phase == phaseStalled:
	case len(r.Rejected) > 0:
		s.phase = phaseStalled
		set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonConfigurationRejected,
			"nginx rejected the new content and serves the previous one: "+strings.Join(r.Rejected, "; "))
	case len(r.Pending) > 0 && s.phase == phaseDone:
		s.phase = phaseProgressing
		set(&s.progressing, metav1.ConditionTrue, v1alpha2.ReasonReloadInProgress,
			fmt.Sprintf("%d pods have not loaded the new content yet: %s", len(r.Pending), strings.Join(r.Pending, ", ")))
	}
}

// addCanary: a staged configuration taken back stalls the NginxOperator until its spec
// changes (the pods serve the stable one); one being compared keeps it progressing.
func (s *operandState) addCanary(no *v1alpha2.NginxOperator, c *v1alpha2.CanaryStatus) {
	if c == nil {
		return
	}
	switch c.Phase {
	case v1alpha2.CanaryFailed:
		if no.Spec.Config == nil || content.ConfigHash(no.Spec.Config.Inline) != c.Hash {
			return
		}
		if s.phase == phaseStalled && !takenBackConfigurationCauses(s.degraded.Reason) {
			return
		}
		s.phase = phaseStalled
		set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonCanaryFailed,
			fmt.Sprintf("the configuration of revision %d was taken back from the canary pods and is not tried again until spec.config changes: %s", c.Revision, c.Message))
	case v1alpha2.CanaryAnalyzing:
		if s.phase == phaseStalled {
			return
		}
		if s.phase == phaseDone {
			s.phase = phaseProgressing
		}
		set(&s.progressing, metav1.ConditionTrue, v1alpha2.ReasonCanaryAnalyzing,
			fmt.Sprintf("the configuration of revision %d is staged on %s: %s", c.Revision, strings.Join(c.Pods, ", "), c.Message))
	}
}

// takenBackConfigurationCauses: the pod failures a configuration taken back from its canary
// pods leaves behind until they pass their probes again on the stable one (the health path
// it failed is the readiness and liveness probes' path). The canary failure is their cause,
// and the one that lasts, so it names the stall; other pod failures have causes of their own.
func takenBackConfigurationCauses(podFailure string) bool {
	return podFailure == v1alpha2.ReasonContainerNotReady || podFailure == v1alpha2.ReasonContainerCrashing
}

// addRefusedService: a refused Service or PodDisruptionBudget degrades the operator but
// leaves Available to the Deployment.
func (s *operandState) addRefusedService(obs Observation) {
	if obs.ServiceFailure == "" || obs.Blocked != "" {
		return
	}
	s.phase = phaseStalled
	if s.degraded.Status == metav1.ConditionTrue && s.degraded.Reason != v1alpha2.ReasonOperandDeploymentNotAvailable {
		s.degraded.Message += "; " + obs.ServiceFailure
	} else {
		set(&s.degraded, metav1.ConditionTrue, v1alpha2.ReasonOperandServiceFailed, obs.ServiceFailure)
	}
}

// summary derives Ready, Reconciling and Stalled from the phase.
func (s *operandState) summary() (ready, reconciling, stalled metav1.Condition) {
	ready = metav1.Condition{Type: v1alpha2.ConditionReady}
	reconciling = metav1.Condition{Type: v1alpha2.ConditionReconciling}
	stalled = metav1.Condition{Type: v1alpha2.ConditionStalled}
	switch s.phase {
	case phaseStalled:
		set(&ready, metav1.ConditionFalse, s.degraded.Reason, s.degraded.Message)
		set(&reconciling, metav1.ConditionFalse, s.degraded.Reason, "waiting for someone to act: "+s.degraded.Message)
		set(&stalled, metav1.ConditionTrue, s.degraded.Reason, s.degraded.Message)
	case phaseDone:
		set(&ready, metav1.ConditionTrue, v1alpha2.ReasonOperatorSucceeded, s.available.Message)
		set(&reconciling, metav1.ConditionFalse, v1alpha2.ReasonOperatorSucceeded, "the Deployment and the Service are as specified")
		set(&stalled, metav1.ConditionFalse, v1alpha2.ReasonOperatorSucceeded, "the Deployment and the Service are as specified")
	default:
		set(&ready, metav1.ConditionFalse, s.progressing.Reason, s.progressing.Message)
		set(&reconciling, metav1.ConditionTrue, s.progressing.Reason, s.progressing.Message)
		set(&stalled, metav1.ConditionFalse, s.progressing.Reason, "making progress: "+s.progressing.Message)
	}
	return ready, reconciling, stalled
}

func set(c *metav1.Condition, status metav1.ConditionStatus, reason, message string) {
	c.Status, c.Reason, c.Message = status, reason, message
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// rolledOut is true when the Deployment controller has seen the latest spec and every
// desired pod is updated and available, and no old pods are left.
func rolledOut(d *appsv1.Deployment, desired int32) bool {
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == desired &&
		d.Status.AvailableReplicas == desired &&
		d.Status.Replicas == desired
}

// deploymentFailed explains a rollout that stopped making progress or cannot create pods.
func deploymentFailed(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse:
			return fmt.Sprintf("Deployment %s: %s", c.Reason, c.Message)
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			return fmt.Sprintf("Deployment %s: %s", c.Reason, c.Message)
		}
	}
	return ""
}

func conditionStatus(d *appsv1.Deployment, t appsv1.DeploymentConditionType) metav1.ConditionStatus {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return metav1.ConditionStatus(c.Status)
		}
	}
	return metav1.ConditionUnknown
}
