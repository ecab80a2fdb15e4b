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

package content

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// loadTimeout is how long canary pods have to load the candidate before it counts as
// failed: their kubelet refreshes the volumes within seconds of the controller's patch.
const loadTimeout = GiveUpAfter

// Analyze follows a stage that compares canary pods: it waits until every canary pod's
// nginx loaded the candidate (desiredCanary), starts the window there, fails the
// candidate when nginx rejected it or the health path failed after the reload, and
// otherwise compares the traffic of the canary pods with the others' since the window
// started (Judge). It updates stage.Status, which the next reconcile acts on: a Pass
// promotes, a Fail takes the canary pods back. It returns when to look again.
func (t *Tracker) Analyze(ctx context.Context, c Cluster, no *v1alpha2.NginxOperator, stage *Stage, desiredCanary string, pods []corev1.Pod) time.Duration {
	st := stage.Status
	now := c.Clock.Now()
	var canaryPods, otherPods []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if stage.Canary[p.Name] {
			canaryPods = append(canaryPods, p)
		} else {
			otherPods = append(otherPods, p)
		}
	}
	end := func(phase v1alpha2.CanaryPhase, message string, lowTraffic bool) time.Duration {
		st.Phase, st.Message = phase, truncate(message, 4000)
		c.canaryEnded(no, st, lowTraffic)
		return PollInterval
	}

	states := readStates(ctx, c, canaryPods)
	// The health path fails the candidate only where it passes on the stable
	// configuration: a path that fails on every pod (its upstream down, say) says
	// nothing about the candidate. The other pods are read only then.
	healthyElsewhere := func() bool { return healthyOn(readStates(ctx, c, otherPods)) }
	var waiting []string
	for i, p := range canaryPods {
		s, err := states[i].state, states[i].err
		switch {
		case err == nil && s.Rejected == desiredCanary:
			return end(v1alpha2.CanaryFailed, fmt.Sprintf("nginx rejected it on pod %s: %s", p.Name, s.Message), false)
		case err == nil && s.Loaded == desiredCanary:
			if h := s.Health; h != nil && h.Content == desiredCanary && h.Failed() && healthyElsewhere() {
				return end(v1alpha2.CanaryFailed, fmt.Sprintf("the health path failed on pod %s after the reload (it passes on the other pods): %s", p.Name, healthAnswer(*h)), false)
			}
		default:
			waiting = append(waiting, p.Name)
		}
	}
	if len(waiting) > 0 {
		if st.StartTime != nil && now.Sub(st.StartTime.Time) > loadTimeout {
			return end(v1alpha2.CanaryFailed, fmt.Sprintf("pods %s did not load it within %s", strings.Join(waiting, ", "), loadTimeout), false)
		}
		st.Message = fmt.Sprintf("waiting for pods %s to load it", strings.Join(waiting, ", "))
		return PollInterval
	}
	if st.AnalysisStartTime == nil {
		started := metav1.NewTime(now)
		st.AnalysisStartTime = &started
		st.Message = "comparing " + strings.Join(st.Pods, ", ") + " with the other pods"
		return PollInterval
	}
	since := st.AnalysisStartTime.Time
	canary, other := sumTraffic(ctx, c, canaryPods, since), sumTraffic(ctx, c, otherPods, since)
	j := Judge(no.Spec.CanarySettings(), canary, other, now.Sub(since))
	switch j.Verdict {
	case Pass:
		return end(v1alpha2.CanaryPromoted, j.Message, j.LowTraffic)
	case Fail:
		return end(v1alpha2.CanaryFailed, j.Message, false)
	}
	// The figures reach status with the verdict: a message that changed with every poll
	// would write status every second.
	st.Message = "comparing " + strings.Join(st.Pods, ", ") + " with the other pods"
	return PollInterval
}

// healthyOn reports whether the health path passed after the last reload of the pods
// that report one, and some does; true when none reports one (nothing to compare with:
// the canary's answer decides).
func healthyOn(states []podState) bool {
	reported, passed := false, false
	for _, s := range states {
		if h := s.state.Health; s.err == nil && h != nil && h.Content == s.state.Loaded {
			reported = true
			passed = passed || !h.Failed()
		}
	}
	return !reported || passed
}

func healthAnswer(h reload.Health) string {
	if h.Code == 0 {
		return "no answer: " + h.Error
	}
	return fmt.Sprintf("HTTP %d", h.Code)
}

type podState struct {
	state reload.State
	err   error
}

// readStates reads the sidecars of pods side by side.
func readStates(ctx context.Context, c Cluster, pods []*corev1.Pod) []podState {
	stateOf := c.ReloadState
	if stateOf == nil {
		stateOf = HTTPReloadState
	}
	out := make([]podState, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() { out[i].state, out[i].err = stateOf(ctx, p) })
	}
	wg.Wait()
	return out
}

// sumTraffic adds up the traffic of pods since; a sidecar that does not answer adds
// nothing.
func sumTraffic(ctx context.Context, c Cluster, pods []*corev1.Pod, since time.Time) reload.Traffic {
	trafficOf := c.Traffic
	if trafficOf == nil {
		trafficOf = HTTPTraffic
	}
	got := make([]reload.Traffic, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() { got[i], _ = trafficOf(ctx, p, since) })
	}
	wg.Wait()
	var sum reload.Traffic
	for _, t := range got {
		sum.Add(t)
	}
	return sum
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
