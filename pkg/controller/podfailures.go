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
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// NotReadyGrace is how long nginx may run without passing its readiness probe before
// status calls it a failure rather than a start: longer than nginx takes to start, shorter
// than the liveness probe takes to restart it (10 s delay plus three failures 10 s apart).
const NotReadyGrace = 20 * time.Second

// PodFailure is why some of an NginxOperator's pods do not run, summarised over pods.
type PodFailure struct {
	// Reason is one of v1alpha2's pod failure reasons.
	Reason string
	// Message says how many pods fail this way and quotes one of them.
	Message string
}

var (
	imagePullReasons = sets.New("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
		"RegistryUnavailable", "SignatureValidationFailed")
	containerConfigReasons = sets.New("CreateContainerConfigError", "CreateContainerError", "RunContainerError",
		"PreStartHookError", "PostStartHookError")
	// failureOrder breaks ties between reasons that as many pods share: the first
	// cause a user has to fix first.
	failureOrder = []string{v1alpha2.ReasonPodsUnschedulable, v1alpha2.ReasonImagePullFailed,
		v1alpha2.ReasonContainerConfigFailed, v1alpha2.ReasonContainerCrashing, v1alpha2.ReasonContainerNotReady}
)

// SummarizePodFailures explains the pods that are created but cannot run: unschedulable,
// image not pulled, container not created, crashing, or not ready for longer than
// NotReadyGrace. It returns nil when no pod fails, and the time after which a pod that
// is running but not yet ready would count as failing (0 when none is waiting for it).
func SummarizePodFailures(pods []corev1.Pod, now time.Time) (*PodFailure, time.Duration) {
	type group struct {
		pods    int
		example string
	}
	groups := map[string]*group{}
	considered := 0
	var recheck time.Duration
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		considered++
		reason, message, wait := podFailure(pod, now)
		if wait > 0 && (recheck == 0 || wait < recheck) {
			recheck = wait
		}
		if reason == "" {
			continue
		}
		g := groups[reason]
		if g == nil {
			g = &group{example: fmt.Sprintf("pod %s: %s", pod.Name, message)}
			groups[reason] = g
		}
		g.pods++
	}
	if len(groups) == 0 {
		return nil, recheck
	}
	reasons := make([]string, 0, len(groups))
	for r := range groups {
		reasons = append(reasons, r)
	}
	rank := func(r string) int {
		for i, o := range failureOrder {
			if o == r {
				return i
			}
		}
		return len(failureOrder)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if groups[reasons[i]].pods != groups[reasons[j]].pods {
			return groups[reasons[i]].pods > groups[reasons[j]].pods
		}
		return rank(reasons[i]) < rank(reasons[j])
	})
	top := groups[reasons[0]]
	msg := fmt.Sprintf("%d of %d pods %s; %s", top.pods, considered, phrase(reasons[0]), top.example)
	if len(reasons) > 1 {
		others := make([]string, 0, len(reasons)-1)
		for _, r := range reasons[1:] {
			others = append(others, fmt.Sprintf("%d %s", groups[r].pods, r))
		}
		msg += " (also: " + strings.Join(others, ", ") + ")"
	}
	return &PodFailure{Reason: reasons[0], Message: msg}, recheck
}

// podFailure classifies one pod. wait > 0 means the pod runs but is not ready yet and
// would count as failing after that long.
func podFailure(pod *corev1.Pod, now time.Time) (reason, message string, wait time.Duration) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return v1alpha2.ReasonPodsUnschedulable, c.Message, 0
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != builders.ContainerName {
			continue
		}
		if w := cs.State.Waiting; w != nil {
			switch {
			case imagePullReasons.Has(w.Reason):
				return v1alpha2.ReasonImagePullFailed, withReason(w.Reason, w.Message), 0
			case containerConfigReasons.Has(w.Reason):
				return v1alpha2.ReasonContainerConfigFailed, withReason(w.Reason, containerConfigMessage(w.Message)), 0
			case w.Reason == "CrashLoopBackOff":
				return v1alpha2.ReasonContainerCrashing, crashMessage(pod.Name, &cs), 0
			}
		}
		if r := cs.State.Running; r != nil && !cs.Ready {
			running := now.Sub(r.StartedAt.Time)
			if running >= NotReadyGrace {
				return v1alpha2.ReasonContainerNotReady,
					// The grace, not the running time: a message that grew every second
					// would make every reconcile a status write.
					fmt.Sprintf("nginx has run for more than %s without passing its readiness probe (kubectl describe pod shows the probe's error)", NotReadyGrace), 0
			}
			return "", "", NotReadyGrace - running
		}
	}
	return "", "", 0
}

// secretProblem is what status says of the kubelet's messages about a Secret the
// container references: whether it exists, or has the key, is not told to readers of
// status who may not read Secrets.
const secretProblem = "a Secret the container references is missing, or lacks the key it names (kubectl describe pod says which)"

// containerConfigMessage is the kubelet's message, unless it is about a Secret.
func containerConfigMessage(message string) string {
	if strings.Contains(strings.ToLower(message), "secret") {
		return secretProblem
	}
	return message
}

func withReason(reason, message string) string {
	if message == "" {
		return reason
	}
	return reason + ": " + message
}

// crashMessage says how nginx last ended: restarts, exit code and reason. Its output, or
// a termination message the image wrote, is never quoted: readers of status need not
// be allowed to read the pod's logs.
func crashMessage(pod string, cs *corev1.ContainerStatus) string {
	msg := fmt.Sprintf("CrashLoopBackOff: restarted %d times", cs.RestartCount)
	if t := cs.LastTerminationState.Terminated; t != nil {
		msg += fmt.Sprintf(", last exit code %d", t.ExitCode)
		if t.Reason != "" {
			msg += " (" + t.Reason + ")"
		}
	}
	return msg + fmt.Sprintf("; nginx's output: kubectl logs %s -c %s --previous", pod, builders.ContainerName)
}

func phrase(reason string) string {
	switch reason {
	case v1alpha2.ReasonPodsUnschedulable:
		return "cannot be scheduled"
	case v1alpha2.ReasonImagePullFailed:
		return "cannot pull the image"
	case v1alpha2.ReasonContainerConfigFailed:
		return "cannot create the nginx container"
	case v1alpha2.ReasonContainerCrashing:
		return "have nginx crashing"
	case v1alpha2.ReasonContainerNotReady:
		return "are not ready"
	}
	return "fail"
}
