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
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/content"
)

// counters plays the sidecars' traffic counts, by pod.
type counters struct {
	mu sync.Mutex
	by map[string]reload.Traffic
}

func (c *counters) set(pod string, requests, errors int) {
	var t reload.Traffic
	for i := range requests {
		status := 200
		if i < errors {
			status = 500
		}
		t.Observe(status, 0.002)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[pod] = t
}

func (c *counters) read(_ context.Context, pod *corev1.Pod, _ time.Time) (reload.Traffic, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.by[pod.Name], nil
}

// TestStagedReload walks spec.canary's default staged reload on four pods: a new
// configuration goes to one canary pod (the ConfigMap holds both, the pod's include
// annotation picks the candidate), is compared once the sidecar says nginx loaded it,
// fails on 5xx answers and is taken back (status, condition and event name it; it is
// not tried again); a good one is promoted by a controller that took over in the middle
// (its state is in the cluster, not in memory), and every pod loads it; the promote
// annotation skips the analysis.
func TestStagedReload(t *testing.T) {
	v1, bad, good := "events {}\nhttp {}\n", "events {}\nhttp { return 500; }\n", "events {}\nhttp { server_tokens off; }\n"
	pods := []string{"web-a", "web-b", "web-c", "web-d"}
	h := newHarness(t, reloading("web", v1), nginxPod(pods[0], nil), nginxPod(pods[1], nil), nginxPod(pods[2], nil), nginxPod(pods[3], nil))
	cars := &sidecars{states: map[string]reload.State{}}
	traffic := &counters{by: map[string]reload.Traffic{}}
	h.r.ReloadState, h.r.Traffic = cars.read, traffic.read
	clock := h.r.Clock.(*clocktesting.FakePassiveClock)
	configMap := func() (string, string) {
		cm := &corev1.ConfigMap{}
		h.get("web-nginx-conf", cm)
		return cm.Data[builders.ConfigFileName], cm.Data[builders.CandidateFileName]
	}
	includes := func() []string {
		var got []string
		for _, name := range pods {
			pod := &corev1.Pod{}
			h.get(name, pod)
			got = append(got, strings.TrimSpace(pod.Annotations[builders.IncludeAnnotation]))
		}
		return got
	}
	canaryStatus := func() *v1alpha2.CanaryStatus {
		no := &v1alpha2.NginxOperator{}
		h.get("web", no)
		return no.Status.Canary
	}
	// loaded plays web-a's sidecar: nginx loaded what web-a's annotation asks for.
	loaded := func() {
		pod := &corev1.Pod{}
		h.get("web-a", pod)
		want := pod.Annotations[reload.ContentHashesAnnotation]
		cars.set("web-a", reload.State{Desired: want, Mounted: want, Loaded: want, Health: &reload.Health{Content: want, Code: 200}})
	}
	stable, candidate := "include /etc/nginx/nginx-operator-config/nginx.conf;", "include /etc/nginx/nginx-operator-config/candidate.conf;"

	h.reconcile("web")
	h.deploymentAvailable("web", 4)
	h.reconcile("web")
	if s, c := configMap(); s != v1 || c != v1 || canaryStatus() != nil {
		t.Fatalf("created: ConfigMap %q/%q, canary %+v", s, c, canaryStatus())
	}

	// A bad configuration: staged on web-a, compared, taken back.
	h.changeSpec("web", func(s *v1alpha2.NginxOperatorSpec) { s.Config.Inline = bad })
	h.reconcile("web")
	if s, c := configMap(); s != v1 || c != bad {
		t.Fatalf("staged: ConfigMap %q/%q; want the stable and the candidate", s, c)
	}
	if got := includes(); got[0] != candidate || got[1] != stable || got[3] != stable {
		t.Fatalf("staged: includes %q; want web-a on the candidate", got)
	}
	st := canaryStatus()
	if st == nil || st.Phase != v1alpha2.CanaryAnalyzing || strings.Join(st.Pods, ",") != "web-a" || st.Hash != content.ConfigHash(bad) {
		t.Fatalf("staged: status %+v", st)
	}
	h.reconcile("web")
	if canaryStatus().AnalysisStartTime != nil {
		t.Fatal("the window started before web-a loaded the candidate")
	}
	loaded()
	h.reconcile("web")
	if canaryStatus().AnalysisStartTime == nil {
		t.Fatal("the window did not start once web-a loaded the candidate")
	}
	traffic.set("web-a", 25, 25)
	for _, p := range pods[1:] {
		traffic.set(p, 25, 0)
	}
	clock.SetTime(clock.Now().Add(3 * time.Second))
	h.reconcile("web")
	st = canaryStatus()
	if st.Phase != v1alpha2.CanaryFailed || !strings.Contains(st.Message, "5xx answers exceed the other pods' share by 100.0 points") ||
		!strings.Contains(st.Message, "canary pods: 25 requests, 25 5xx (100.0%)") {
		t.Fatalf("failed: status %+v", st)
	}
	if c := h.condition("web", v1alpha2.ConditionStalled); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha2.ReasonCanaryFailed {
		t.Fatalf("Stalled = %+v", c)
	}
	h.reconcile("web")
	if s, c := configMap(); s != v1 || c != v1 {
		t.Fatalf("taken back: ConfigMap %q/%q", s, c)
	}
	if got := includes(); got[0] != stable {
		t.Fatalf("taken back: includes %q", got)
	}
	if got := h.reconcile("web"); len(got) != 0 {
		t.Fatalf("a failed configuration is tried again: wrote %q", got)
	}
	if events := drain(h); !strings.Contains(events, "CanaryStarted") || !strings.Contains(events, "Warning CanaryFailed") {
		t.Fatalf("events: %s", events)
	}

	// A good one, and a controller that takes over in the middle: it finds the stage in
	// the cluster and promotes after the window.
	h.changeSpec("web", func(s *v1alpha2.NginxOperatorSpec) { s.Config.Inline = good })
	h.reconcile("web")
	loaded()
	h.reconcile("web")
	h.r = &Reconciler{Client: h.r.Client, APIReader: h.r.APIReader, Recorder: h.r.Recorder, Clock: clock, ReloadState: cars.read, Traffic: traffic.read}
	for _, p := range pods {
		traffic.set(p, 40, 0)
	}
	h.reconcile("web")
	if st := canaryStatus(); st.Phase != v1alpha2.CanaryAnalyzing {
		t.Fatalf("within the window: %+v", st)
	}
	if c := h.condition("web", v1alpha2.ConditionProgressing); c == nil || c.Reason != v1alpha2.ReasonCanaryAnalyzing {
		t.Fatalf("Progressing = %+v", c)
	}
	clock.SetTime(clock.Now().Add(v1alpha2.DefaultCanaryAnalysisSeconds * time.Second))
	h.reconcile("web")
	if st := canaryStatus(); st.Phase != v1alpha2.CanaryPromoted || !strings.Contains(st.Message, "canary pods: 40 requests, 0 5xx") {
		t.Fatalf("promoted: %+v", st)
	}
	h.reconcile("web")
	if s, c := configMap(); s != good || c != good {
		t.Fatalf("promoted: ConfigMap %q/%q", s, c)
	}
	if got := includes(); got[0] != stable {
		t.Fatalf("promoted: includes %q", got)
	}

	// The promote annotation skips the comparison of the configuration it names.
	next := "events {}\nhttp { server_tokens on; }\n"
	h.changeSpec("web", func(s *v1alpha2.NginxOperatorSpec) { s.Config.Inline = next })
	h.reconcile("web")
	no := &v1alpha2.NginxOperator{}
	h.get("web", no)
	no.Annotations = map[string]string{content.CanaryAnnotation: "promote " + content.ConfigHash(next)}
	h.update(no)
	h.reconcile("web")
	h.reconcile("web")
	if s, c := configMap(); s != next || c != next || canaryStatus().Phase != v1alpha2.CanaryPromoted {
		t.Fatalf("promoted by annotation: ConfigMap %q/%q, status %+v", s, c, canaryStatus())
	}
	if c := apimeta.FindStatusCondition(no.Status.Conditions, v1alpha2.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("Stalled after the promotion: %+v", c)
	}

	// nginx on the canary pod rejects the next one: taken back at once, nginx quoted.
	typo := "events {}\nhttp { server_tokenz off; }\n"
	h.changeSpec("web", func(s *v1alpha2.NginxOperatorSpec) { s.Config.Inline = typo })
	h.reconcile("web")
	pod := &corev1.Pod{}
	h.get("web-a", pod)
	asked := pod.Annotations[reload.ContentHashesAnnotation]
	cars.set("web-a", reload.State{Desired: asked, Mounted: asked, Loaded: "before", Rejected: asked, Message: `[emerg] unknown directive "server_tokenz"`})
	h.reconcile("web")
	if st := canaryStatus(); st.Phase != v1alpha2.CanaryFailed || st.Message != `nginx rejected it on pod web-a: [emerg] unknown directive "server_tokenz"` {
		t.Fatalf("rejected on the canary: %+v", st)
	}
	h.reconcile("web")
	if s, c := configMap(); s != next || c != next {
		t.Fatalf("rejected: ConfigMap %q/%q; want the stable one only", s, c)
	}
}
