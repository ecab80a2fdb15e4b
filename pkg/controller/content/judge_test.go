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
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// traffic is n requests, errors of them 5xx, all of about seconds.
func traffic(n, errors int, seconds float64) reload.Traffic {
	var t reload.Traffic
	for i := range n {
		status := 200
		if i < errors {
			status = 503
		}
		t.Observe(status, seconds)
	}
	return t
}

func TestJudge(t *testing.T) {
	s := (&v1alpha2.NginxOperatorSpec{}).CanarySettings() // 30s, 5 points, +100%, 20 requests
	for _, tc := range []struct {
		name             string
		canary, baseline reload.Traffic
		elapsed          time.Duration
		want             Verdict
		lowTraffic       bool
		says             string
	}{
		{"5xx fail at once", traffic(20, 20, 0.001), traffic(60, 0, 0.001), 2 * time.Second, Fail, false, "exceed the other pods' share by 100.0 points"},
		{"too few requests to fail early", traffic(19, 19, 0.001), traffic(60, 0, 0.001), 2 * time.Second, Wait, false, ""},
		{"errors like the others'", traffic(100, 50, 0.001), traffic(300, 150, 0.001), 31 * time.Second, Pass, false, "50 5xx (50.0%)"},
		{"within the points allowed", traffic(100, 5, 0.001), traffic(300, 0, 0.001), 31 * time.Second, Pass, false, ""},
		{"over the points allowed", traffic(100, 6, 0.001), traffic(300, 0, 0.001), 3 * time.Second, Fail, false, "by 6.0 points"},
		{"good, window not over", traffic(100, 0, 0.001), traffic(300, 0, 0.001), 29 * time.Second, Wait, false, ""},
		{"good at the window's end", traffic(100, 0, 0.001), traffic(300, 0, 0.001), 30 * time.Second, Pass, false, "canary pods: 100 requests, 0 5xx"},
		{"slow", traffic(100, 0, 0.4), traffic(300, 0, 0.02), 30 * time.Second, Fail, false, "90th percentile latency is 500ms against 25ms"},
		{"slow but under the floor", traffic(100, 0, 0.04), traffic(300, 0, 0.004), 30 * time.Second, Pass, false, ""},
		{"slower within the percent", traffic(100, 0, 0.2), traffic(300, 0, 0.2), 30 * time.Second, Pass, false, ""},
		{"low traffic waits", traffic(3, 0, 0.001), traffic(10, 0, 0.001), 100 * time.Second, Wait, false, "waiting for 20 requests"},
		{"low traffic promotes on health, saying so", traffic(3, 0, 0.001), traffic(10, 0, 0.001), 120 * time.Second, Pass, true, "promoted on the health check alone: the canary pods answered 3 requests"},
		{"no traffic at all", reload.Traffic{}, reload.Traffic{}, 120 * time.Second, Pass, true, "canary pods: no requests"},
	} {
		got := Judge(s, tc.canary, tc.baseline, tc.elapsed)
		if got.Verdict != tc.want || got.LowTraffic != tc.lowTraffic || !strings.Contains(got.Message, tc.says) {
			t.Errorf("%s: %+v; want verdict %d, low traffic %v, a message with %q", tc.name, got, tc.want, tc.lowTraffic, tc.says)
		}
	}
}

// TestHealthyOn: the health path counts against a candidate only where it passes on
// the stable configuration, or where no other pod reports it.
func TestHealthyOn(t *testing.T) {
	state := func(loaded string, code int) podState {
		return podState{state: reload.State{Loaded: loaded, Health: &reload.Health{Content: loaded, Code: code}}}
	}
	for _, tc := range []struct {
		name   string
		states []podState
		want   bool
	}{
		{"no other pod", nil, true},
		{"none reports", []podState{{state: reload.State{Loaded: "a"}}}, true},
		{"passes elsewhere", []podState{state("a", 200), state("a", 500)}, true},
		{"fails everywhere", []podState{state("a", 502), state("a", 0)}, false},
		{"an older reload's answer does not count", []podState{{state: reload.State{Loaded: "b", Health: &reload.Health{Content: "a", Code: 500}}}}, true},
	} {
		if got := healthyOn(tc.states); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
