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
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/content"
)

func deployment(generation, observed int64, replicas, updated, ready, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: generation},
		Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: ready, AvailableReplicas: available, Conditions: conds},
	}
}

func cond(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: reason + " message"}
}

func TestComputeStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	available := cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable")
	unavailable := cond(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable")
	cases := []struct {
		name                             string
		obs                              Observation
		wantAvailable, wantProgressing   metav1.ConditionStatus
		wantDegraded                     metav1.ConditionStatus
		wantDegradedReason               string
		wantReplicas, wantReady, wantAvl int32
	}{
		{"no deployment yet", Observation{}, "False", "True", "True", v1alpha2.ReasonOperandDeploymentNotAvailable, 0, 0, 0},
		{"rolling out, nothing ready", Observation{Deployment: deployment(1, 1, 2, 2, 0, 0, unavailable)}, "False", "True", "True", v1alpha2.ReasonOperandDeploymentNotAvailable, 2, 0, 0},
		{"rolled out", Observation{Deployment: deployment(1, 1, 2, 2, 2, 2, available)}, "True", "False", "False", v1alpha2.ReasonOperatorSucceeded, 2, 2, 2},
		{"available while a new spec rolls out", Observation{Deployment: deployment(2, 1, 3, 1, 2, 2, available)}, "True", "True", "False", v1alpha2.ReasonOperatorSucceeded, 3, 2, 2},
		{"progress deadline exceeded", Observation{Deployment: deployment(1, 1, 2, 2, 0, 0, unavailable, cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded"))}, "False", "False", "True", v1alpha2.ReasonOperandDeploymentFailed, 2, 0, 0},
		{"replica failure", Observation{Deployment: deployment(1, 1, 0, 0, 0, 0, cond(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate"))}, "Unknown", "False", "True", v1alpha2.ReasonOperandDeploymentFailed, 0, 0, 0},
		{"Deployment refused, none exists", Observation{DeploymentFailure: "refused"}, "False", "False", "True", v1alpha2.ReasonOperandDeploymentFailed, 0, 0, 0},
		{"Deployment update refused, old pods serve", Observation{DeploymentFailure: "refused", Deployment: deployment(1, 1, 2, 2, 2, 2, available)}, "True", "False", "True", v1alpha2.ReasonOperandDeploymentFailed, 2, 2, 2},
		{"Service refused, Deployment serves", Observation{ServiceFailure: "refused", Deployment: deployment(1, 1, 2, 2, 2, 2, available)}, "True", "False", "True", v1alpha2.ReasonOperandServiceFailed, 2, 2, 2},
		{"both refused, the Deployment is named", Observation{DeploymentFailure: "refused", ServiceFailure: "refused too"}, "False", "False", "True", v1alpha2.ReasonOperandDeploymentFailed, 0, 0, 0},
		{"blocked by a foreign Service", Observation{Blocked: "Service shop/web exists", Deployment: deployment(1, 1, 2, 2, 2, 2, available)}, "False", "False", "True", v1alpha2.ReasonOperatorResourceNotAvailable, 2, 2, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			no := sample("web")
			st := ComputeStatus(no, tc.obs, now)
			check := func(typ string, want metav1.ConditionStatus) *metav1.Condition {
				c := apimeta.FindStatusCondition(st.Conditions, typ)
				if c == nil || c.Status != want || c.ObservedGeneration != 1 || c.Reason == "" || c.Message == "" {
					t.Errorf("%s = %+v, want status %s", typ, c, want)
				}
				return c
			}
			check(v1alpha2.ConditionAvailable, tc.wantAvailable)
			check(v1alpha2.ConditionProgressing, tc.wantProgressing)
			if d := check(v1alpha2.ConditionOperatorDegraded, tc.wantDegraded); d != nil && d.Reason != tc.wantDegradedReason {
				t.Errorf("OperatorDegraded reason = %s, want %s", d.Reason, tc.wantDegradedReason)
			}
			if st.Replicas != tc.wantReplicas || st.ReadyReplicas != tc.wantReady || st.AvailableReplicas != tc.wantAvl {
				t.Errorf("counts = %d/%d/%d", st.Replicas, st.ReadyReplicas, st.AvailableReplicas)
			}
			if st.ObservedGeneration != 1 || st.Selector != "app.kubernetes.io/instance=web,app.kubernetes.io/name=nginx" || st.RealQPS != nil {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

func TestRealQPSIsObserved(t *testing.T) {
	no := sample("api")
	no.Spec.Replicas = nil
	no.Spec.QPS = &v1alpha2.QPSSpec{SinglePodQPS: 800, TotalQPS: 2400}
	st := ComputeStatus(no, Observation{Deployment: deployment(1, 1, 3, 3, 2, 2)}, metav1.Now())
	if st.RealQPS == nil || *st.RealQPS != 1600 {
		t.Errorf("realQPS = %v, want 800 x 2 ready pods = 1600", st.RealQPS)
	}
}

// An unchanged world must compute an identical status, or every reconcile would write.
func TestComputeStatusIsStable(t *testing.T) {
	no := sample("web")
	obs := Observation{Deployment: deployment(1, 1, 2, 2, 2, 2, cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable"))}
	no.Status = ComputeStatus(no, obs, metav1.NewTime(time.Unix(1000, 0)))
	again := ComputeStatus(no, obs, metav1.NewTime(time.Unix(2000, 0)))
	if !apiequality.Semantic.DeepEqual(again, no.Status) {
		t.Errorf("status changed without a change in the world:\n%+v\n%+v", no.Status, again)
	}
	obs.Deployment.Status.ReadyReplicas = 1
	changed := ComputeStatus(no, obs, metav1.NewTime(time.Unix(3000, 0)))
	if c := apimeta.FindStatusCondition(changed.Conditions, v1alpha2.ConditionAvailable); c.LastTransitionTime.Unix() != 1000 {
		t.Errorf("Available kept status True, so its lastTransitionTime must stay: %v", c.LastTransitionTime)
	}
}

// A configuration taken back from its canary pods leaves them unready (or restarted by the
// liveness probe) until they pass the health path again on the stable one: the canary
// failure, the cause, names the stall then. A pod failure with a cause of its own keeps
// naming it.
func TestCanaryFailureNamesTheStallItCauses(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC))
	unavailable := cond(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable")
	available := cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable")
	cases := []struct {
		name       string
		podFailure string
		canary     v1alpha2.CanaryPhase
		otherHash  bool
		wantReason string
	}{
		{"canary pods not ready after the take-back", v1alpha2.ReasonContainerNotReady, v1alpha2.CanaryFailed, false, v1alpha2.ReasonCanaryFailed},
		{"canary pods restarted by the liveness probe", v1alpha2.ReasonContainerCrashing, v1alpha2.CanaryFailed, false, v1alpha2.ReasonCanaryFailed},
		{"pods that cannot pull their image", v1alpha2.ReasonImagePullFailed, v1alpha2.CanaryFailed, false, v1alpha2.ReasonImagePullFailed},
		{"pods not ready, no canary failed", v1alpha2.ReasonContainerNotReady, "", false, v1alpha2.ReasonContainerNotReady},
		{"pods not ready, a configuration since replaced failed", v1alpha2.ReasonContainerNotReady, v1alpha2.CanaryFailed, true, v1alpha2.ReasonContainerNotReady},
		{"pods not ready while a canary is compared", v1alpha2.ReasonContainerNotReady, v1alpha2.CanaryAnalyzing, false, v1alpha2.ReasonContainerNotReady},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			no := sample("web")
			no.Spec.Replicas = ptr.To[int32](4)
			no.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\nhttp { server { listen 8080; } }\n"}
			obs := Observation{
				Deployment: deployment(1, 1, 4, 4, 3, 3, available),
				PodFailure: &PodFailure{Reason: tc.podFailure, Message: "1 pod fails"},
			}
			if tc.canary != "" {
				hash := content.ConfigHash(no.Spec.Config.Inline)
				if tc.otherHash {
					hash = content.ConfigHash("events {}\n")
				}
				obs.Canary = &v1alpha2.CanaryStatus{Phase: tc.canary, Hash: hash, Revision: 3, Message: "the health path failed"}
			}
			st := ComputeStatus(no, obs, now)
			c := apimeta.FindStatusCondition(st.Conditions, v1alpha2.ConditionStalled)
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != tc.wantReason {
				t.Errorf("Stalled = %+v, want True %s", c, tc.wantReason)
			}
			if a := apimeta.FindStatusCondition(st.Conditions, v1alpha2.ConditionAvailable); a == nil || a.Status != metav1.ConditionTrue {
				t.Errorf("Available = %+v: three of four pods serve", a)
			}
		})
	}
	// Once the pods pass their probes, and while none does, the stall stays the canary's.
	no := sample("web")
	no.Spec.Replicas = ptr.To[int32](4)
	no.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\n"}
	canary := &v1alpha2.CanaryStatus{Phase: v1alpha2.CanaryFailed, Hash: content.ConfigHash(no.Spec.Config.Inline)}
	for _, d := range []*appsv1.Deployment{deployment(1, 1, 4, 4, 4, 4, available), deployment(1, 1, 4, 4, 0, 0, unavailable)} {
		obs := Observation{Deployment: d, Canary: canary}
		if d.Status.ReadyReplicas == 0 {
			obs.PodFailure = &PodFailure{Reason: v1alpha2.ReasonContainerNotReady, Message: "4 pods are not ready"}
		}
		st := ComputeStatus(no, obs, now)
		if c := apimeta.FindStatusCondition(st.Conditions, v1alpha2.ConditionStalled); c == nil || c.Reason != v1alpha2.ReasonCanaryFailed {
			t.Errorf("%d of 4 ready: Stalled = %+v, want CanaryFailed", d.Status.ReadyReplicas, c)
		}
	}
}
