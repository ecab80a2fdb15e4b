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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

var podsNow = time.Unix(1_800_000_000, 0)

func pendingPod(name, message string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: message}}}}
}

func waitingPod(name, reason, message string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{{Name: builders.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}}}
}

func runningPod(name string, ready bool, since time.Duration) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: builders.ContainerName, Ready: ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(podsNow.Add(-since))}}}}}}
}

func TestSummarizePodFailures(t *testing.T) {
	crashing := waitingPod("web-c", "CrashLoopBackOff", "back-off 40s restarting failed container=nginx")
	crashing.Status.ContainerStatuses[0].RestartCount = 3
	crashing.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
		Message: "nginx: [emerg] unknown directive \"lisen\" in /etc/nginx/nginx.conf:12\n"}
	terminating := pendingPod("web-old", "0/1 nodes are available")
	terminating.DeletionTimestamp = &metav1.Time{Time: podsNow}

	for _, tc := range []struct {
		name        string
		pods        []corev1.Pod
		wantReason  string
		wantMessage []string
		notMessage  []string
		wantRecheck time.Duration
	}{{
		name: "all running and ready",
		pods: []corev1.Pod{runningPod("web-a", true, time.Hour), runningPod("web-b", true, time.Minute)},
	}, {
		name:        "unschedulable: the scheduler's message",
		pods:        []corev1.Pod{pendingPod("web-a", "0/1 nodes are available: 1 Insufficient cpu."), runningPod("web-b", true, time.Hour)},
		wantReason:  v1alpha2.ReasonPodsUnschedulable,
		wantMessage: []string{"1 of 2 pods cannot be scheduled", "pod web-a: 0/1 nodes are available: 1 Insufficient cpu."},
	}, {
		name:        "image pull",
		pods:        []corev1.Pod{waitingPod("web-a", "ImagePullBackOff", `Back-off pulling image "127.0.0.1:1/none:1"`)},
		wantReason:  v1alpha2.ReasonImagePullFailed,
		wantMessage: []string{"1 of 1 pods cannot pull the image", `ImagePullBackOff: Back-off pulling image "127.0.0.1:1/none:1"`},
	}, {
		name:        "container config",
		pods:        []corev1.Pod{waitingPod("web-a", "CreateContainerConfigError", "container has runAsNonRoot and image will run as root")},
		wantReason:  v1alpha2.ReasonContainerConfigFailed,
		wantMessage: []string{"cannot create the nginx container", "runAsNonRoot"},
	}, {
		name:        "crash loop: restarts, exit code and where to read nginx's output, never the output",
		pods:        []corev1.Pod{crashing},
		wantReason:  v1alpha2.ReasonContainerCrashing,
		wantMessage: []string{"pod web-c: CrashLoopBackOff: restarted 3 times, last exit code 1 (Error); nginx's output: kubectl logs web-c -c nginx --previous"},
		notMessage:  []string{"lisen", "emerg"},
	}, {
		name:        "container config about a Secret: not whether it exists or lacks the key",
		pods:        []corev1.Pod{waitingPod("web-a", "CreateContainerConfigError", `couldn't find key password in Secret shop/db`), waitingPod("web-b", "CreateContainerConfigError", `secret "db" not found`)},
		wantReason:  v1alpha2.ReasonContainerConfigFailed,
		wantMessage: []string{"CreateContainerConfigError: " + secretProblem},
		notMessage:  []string{"password", "not found", `"db"`},
	}, {
		name:        "not ready past the grace period",
		pods:        []corev1.Pod{runningPod("web-a", false, 2*time.Minute)},
		wantReason:  v1alpha2.ReasonContainerNotReady,
		wantMessage: []string{"1 of 1 pods are not ready", "has run for more than 20s without passing its readiness probe"},
	}, {
		name:        "just started: not a failure yet, look again when the grace ends",
		pods:        []corev1.Pod{runningPod("web-a", false, 5*time.Second), runningPod("web-b", false, 15*time.Second)},
		wantRecheck: 5 * time.Second,
	}, {
		name: "the most common cause leads, the others are counted",
		pods: []corev1.Pod{pendingPod("web-a", "no nodes"), waitingPod("web-b", "ErrImagePull", "x"), waitingPod("web-c", "ImagePullBackOff", "y"),
			terminating},
		wantReason:  v1alpha2.ReasonImagePullFailed,
		wantMessage: []string{"2 of 3 pods cannot pull the image", "(also: 1 PodsUnschedulable)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			// The same pods a minute later say the same: status is not rewritten for time alone.
			later, _ := SummarizePodFailures(tc.pods, podsNow.Add(time.Minute))
			failure, recheck := SummarizePodFailures(tc.pods, podsNow)
			if tc.wantReason != "" && (later == nil || failure == nil || *later != *failure) {
				t.Errorf("a minute later the summary is %+v, was %+v", later, failure)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck after %s, want %s", recheck, tc.wantRecheck)
			}
			if tc.wantReason == "" {
				if failure != nil {
					t.Errorf("failure %+v, want none", failure)
				}
				return
			}
			if failure == nil || failure.Reason != tc.wantReason {
				t.Fatalf("failure %+v, want reason %s", failure, tc.wantReason)
			}
			for _, want := range tc.wantMessage {
				if !strings.Contains(failure.Message, want) {
					t.Errorf("message %q lacks %q", failure.Message, want)
				}
			}
			for _, not := range tc.notMessage {
				if strings.Contains(failure.Message, not) {
					t.Errorf("message %q quotes %q", failure.Message, not)
				}
			}
		})
	}
}
