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
	"fmt"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Verdict is what a comparison of canary pods with the others decided.
type Verdict int

const (
	// Wait: not decided yet.
	Wait Verdict = iota
	// Pass: every pod may load the configuration.
	Pass
	// Fail: the canary pods go back.
	Fail
)

// lowTrafficWindows is how many analysis windows the guard waits for enough requests
// before it promotes on the health check alone.
const lowTrafficWindows = 4

// latencyFloor is a difference of 90th percentiles that never fails: below it, the
// buckets' width is noise.
const latencyFloor = 50 * time.Millisecond

// Judgement is a Verdict with the words and figures status and the event give.
type Judgement struct {
	Verdict Verdict
	// LowTraffic is a Pass on the health check alone: too few requests to compare.
	LowTraffic bool
	Message    string
}

// Judge compares the traffic of the canary pods with the other pods' after elapsed of
// the analysis window. 5xx answers fail a canary as soon as it answered minRequests;
// latency is judged at the window's end; with too few requests the window is extended
// lowTrafficWindows times, then the health check that passed decides.
func Judge(s v1alpha2.CanarySettings, canary, baseline reload.Traffic, elapsed time.Duration) Judgement {
	figures := fmt.Sprintf("canary pods: %s; other pods: %s; after %s", describe(canary), describe(baseline), elapsed.Round(time.Second))
	enough := canary.Requests >= int64(s.MinRequests)
	if enough {
		if excess := canary.ErrorPercent() - baseline.ErrorPercent(); excess > float64(s.MaxErrorPercent) {
			return Judgement{Verdict: Fail, Message: fmt.Sprintf("5xx answers exceed the other pods' share by %.1f points (at most %d allowed): %s", excess, s.MaxErrorPercent, figures)}
		}
	}
	if elapsed < s.Analysis {
		return Judgement{Verdict: Wait, Message: figures}
	}
	if !enough {
		if elapsed < lowTrafficWindows*s.Analysis {
			return Judgement{Verdict: Wait, Message: fmt.Sprintf("waiting for %d requests: %s", s.MinRequests, figures)}
		}
		return Judgement{Verdict: Pass, LowTraffic: true, Message: fmt.Sprintf("promoted on the health check alone: the canary pods answered %d requests in %s, fewer than the %d compared (spec.canary.minRequests): %s",
			canary.Requests, elapsed.Round(time.Second), s.MinRequests, figures)}
	}
	c, b := canary.Quantile(0.9), baseline.Quantile(0.9)
	if baseline.Requests > 0 && time.Duration((c-b)*float64(time.Second)) > latencyFloor && c > b*(1+float64(s.MaxLatencyPercent)/100) {
		return Judgement{Verdict: Fail, Message: fmt.Sprintf("the 90th percentile latency is %s against %s on the other pods (at most %d%% more allowed): %s",
			seconds(c), seconds(b), s.MaxLatencyPercent, figures)}
	}
	return Judgement{Verdict: Pass, Message: figures}
}

// describe gives the figures of one side.
func describe(t reload.Traffic) string {
	if t.Requests == 0 {
		return "no requests"
	}
	return fmt.Sprintf("%d requests, %d 5xx (%.1f%%), p90 ≤ %s", t.Requests, t.Errors, t.ErrorPercent(), seconds(t.Quantile(0.9)))
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}
