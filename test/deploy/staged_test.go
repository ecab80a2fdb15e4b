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

package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// badConfig answers 500 to every request, the health path included: a configuration
// nginx accepts and that takes a site down.
const badConfig = "return 500;"

// statusLoop requests / through an address 50 times a second and records when each
// request was sent, whether it was answered 200, and why not.
type statusLoop struct {
	mu         sync.Mutex
	sent       []time.Time
	ok         []bool
	why        []string
	stop, done chan struct{}
}

var statusClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func startStatusLoop(t *testing.T, addr string) *statusLoop {
	t.Helper()
	if ip := net.ParseIP(strings.Split(addr, ":")[0]); ip == nil || !serviceNet.Contains(ip) {
		t.Fatalf("%s is not a service address of the local node", addr)
	}
	l := &statusLoop{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		pace := time.NewTicker(20 * time.Millisecond)
		defer pace.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-pace.C:
			}
			sent := time.Now()
			resp, err := statusClient.Get("http://" + addr + "/")
			why := ""
			if err != nil {
				why = err.Error()
			} else {
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					why = resp.Status
				}
			}
			l.mu.Lock()
			l.sent, l.ok, l.why = append(l.sent, sent), append(l.ok, why == ""), append(l.why, why)
			l.mu.Unlock()
		}
	}()
	return l
}

// since counts the requests sent from start on, the failed ones, and the span from start
// to the first and to the last failure.
func (l *statusLoop) since(start time.Time) (requests, failed int, first, last time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, sent := range l.sent {
		if sent.Before(start) {
			continue
		}
		requests++
		if !l.ok[i] {
			failed++
			if first == 0 {
				first = sent.Sub(start)
			}
			last = sent.Sub(start)
		}
	}
	return requests, failed, first, last
}

// failedAfter counts the failures among the requests sent after at and names the first
// few distinct reasons.
func (l *statusLoop) failedAfter(at time.Time) (requests, failed int, reasons []string) {
	requests, failed, _, _ = l.since(at)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, sent := range l.sent {
		if !sent.Before(at) && !l.ok[i] && len(reasons) < 3 && !slices.Contains(reasons, l.why[i]) {
			reasons = append(reasons, l.why[i])
		}
	}
	return requests, failed, reasons
}

// firstAnsweredAfter is when the first request sent after at was answered 200, if any.
func (l *statusLoop) firstAnsweredAfter(at time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, sent := range l.sent {
		if !sent.Before(at) && l.ok[i] {
			return sent, true
		}
	}
	return time.Time{}, false
}

func (l *statusLoop) finish() {
	close(l.stop)
	<-l.done
}

// badWriteFigures is one row of the table of a configuration answering 500, written
// under load.
type badWriteFigures struct {
	mode                  string
	replicas              int
	requests, failed      int
	firstFailure, lastOne time.Duration
	ended                 string
}

// measureBadWrite writes badConfig under a request loop through the Service and measures
// how many requests fail and for how long: in Staged mode until the guard took it back
// (status.canary Failed) and the pods serve previous again; in Reload and Rollout mode,
// where nothing takes it back, for observe, then restore writes previous again.
func measureBadWrite(t *testing.T, name, mode, previous string, replicas int, write, restore func(), observe time.Duration) badWriteFigures {
	t.Helper()
	clusterIP := get(t, "get", "service", name, "-o", "jsonpath={.spec.clusterIP}")
	serviceAnswers(t, clusterIP, "content "+previous+"\n")
	loop := startStatusLoop(t, clusterIP+":80")
	defer loop.finish()
	f := badWriteFigures{mode: mode, replicas: replicas}
	changed := time.Now()
	write()
	switch mode {
	case "Staged":
		var st string
		waitFor(t, 5*time.Minute, "the guard to take the configuration back", func() bool {
			st = get(t, "get", "ngx", name, "-o", "jsonpath={.status.canary.phase}: {.status.canary.message}")
			return strings.HasPrefix(st, "Failed:")
		})
		f.ended = fmt.Sprintf("taken back %s after the write: %s", time.Since(changed).Round(100*time.Millisecond), st)
		events := get(t, "get", "events", "--field-selector", "involvedObject.name="+name+",reason=CanaryFailed", "-o", "jsonpath={.items[*].note}{.items[*].message}")
		if !strings.Contains(events, "taken back from the canary pods") {
			t.Errorf("Staged, %d pods: no CanaryFailed event: %q", replicas, events)
		}
		if stalled := get(t, "get", "ngx", name, "-o", `jsonpath={.status.conditions[?(@.type=="Stalled")].reason}`); stalled != "CanaryFailed" {
			t.Errorf("Staged, %d pods: Stalled's reason %q, want CanaryFailed", replicas, stalled)
		}
	default:
		time.Sleep(observe) // the measured period: nothing takes it back in these modes
		f.ended = fmt.Sprintf("nothing took it back; written again by hand after %s", observe)
		restore()
	}
	pods := nginxPods(t, name)
	waitFor(t, 5*time.Minute, "every pod to serve "+previous+" again", func() bool {
		pods = nginxPods(t, name)
		return len(pods) >= replicas && everyPodServes(pods, "content "+previous+"\n")
	})
	// A configuration failing the health path for long also fails the liveness probes: the
	// kubelet restarts nginx containers, and one it began to restart (the preStop delay
	// first) may serve the previous configuration and be ready for a moment before it
	// stops. Wait until every restart the kubelet began has happened.
	waitFor(t, 5*time.Minute, "every nginx restart the liveness probes began to end", func() bool {
		kills, restarts := livenessRestarts(t, name)
		return restarts >= kills
	})
	if kills, _ := livenessRestarts(t, name); kills > 0 {
		t.Logf("%s, %d pods: the liveness probes restarted nginx %d times under the bad configuration", mode, replicas, kills)
	}
	// A configuration failing the health path also failed the readiness probes: with
	// every pod unready the Service has no endpoint and kube-proxy refuses its
	// connections. It routes to the pods again once the EndpointSlices list them ready
	// and kube-proxy has synced them, which the first answered request shows. From then
	// on nothing fails.
	want := fmt.Sprint(replicas)
	waitFor(t, 5*time.Minute, "every pod ready again", func() bool {
		return get(t, "get", "deployment", name, "-o", "jsonpath={.status.readyReplicas}/{.status.updatedReplicas}/{.status.replicas}") == want+"/"+want+"/"+want
	})
	waitFor(t, 2*time.Minute, "the Service's EndpointSlices to list every pod ready", func() bool {
		ready := get(t, "get", "endpointslices", "-l", "kubernetes.io/service-name="+name, "-o", `jsonpath={.items[*].endpoints[?(@.conditions.ready==true)].addresses[0]}`)
		return len(strings.Fields(ready)) == replicas
	})
	listed := time.Now()
	var settled time.Time
	waitFor(t, 2*time.Minute, "a request through the Service answered", func() bool {
		var ok bool
		settled, ok = loop.firstAnsweredAfter(listed)
		return ok
	})
	t.Logf("%s, %d pods: the Service answered %s after its EndpointSlices listed every pod ready", mode, replicas, settled.Sub(listed).Round(10*time.Millisecond))
	waitFor(t, 2*time.Minute, "200 more requests", func() bool { n, _, _ := loop.failedAfter(settled); return n >= 200 })
	if n, failed, reasons := loop.failedAfter(settled); failed != 0 {
		t.Errorf("%s, %d pods: %d of %d requests failed after the pods served %s again: %q", mode, replicas, failed, n, previous, reasons)
	}
	f.requests, f.failed, f.firstFailure, f.lastOne = loop.since(changed)
	if mode == "Staged" && f.failed*2 > f.requests {
		t.Errorf("Staged, %d pods: %d of %d requests failed; the guard let more than half fail", replicas, f.failed, f.requests)
	}
	return f
}

// leaderDeletedMidStage writes a good configuration, deletes the controller's leader pod
// once the canary pods are being compared, and waits for the other replica to finish the
// staged reload from what the cluster holds: promoted, every pod serving it.
func leaderDeletedMidStage(t *testing.T, name, version string, replicas int, write func()) string {
	changed := time.Now()
	write()
	waitFor(t, 3*time.Minute, "the canary pods to be compared", func() bool {
		st := get(t, "get", "ngx", name, "-o", "jsonpath={.status.canary.phase}/{.status.canary.analysisStartTime}")
		return strings.HasPrefix(st, "Analyzing/") && len(st) > len("Analyzing/")
	})
	holder := get(t, "get", "lease", "-n", systemNS, "nginx-operator-controller", "-o", "jsonpath={.spec.holderIdentity}")
	leader, _, _ := strings.Cut(holder, "_")
	mustKubectl(t, "", "delete", "pod", "-n", systemNS, leader, "--wait=false")
	deleted := time.Since(changed)
	waitFor(t, 5*time.Minute, "the staged configuration promoted by the next leader", func() bool {
		return get(t, "get", "ngx", name, "-o", "jsonpath={.status.canary.phase}") == "Promoted"
	})
	pods := nginxPods(t, name)
	waitFor(t, 3*time.Minute, "every pod to serve "+version, func() bool {
		pods = nginxPods(t, name)
		return len(pods) >= replicas && everyPodServes(pods, "content "+version+"\n")
	})
	next := get(t, "get", "lease", "-n", systemNS, "nginx-operator-controller", "-o", "jsonpath={.spec.holderIdentity}")
	return fmt.Sprintf("leader %s deleted %s after the write, mid-analysis; %s promoted it, every pod served %s %s after the write",
		leader, deleted.Round(100*time.Millisecond), next, version, time.Since(changed).Round(100*time.Millisecond))
}

// livenessRestarts counts, over the pods of instance, the container restarts the kubelet
// began because a liveness probe failed (its Killing events) and the restarts done.
func livenessRestarts(t *testing.T, instance string) (kills, restarts int) {
	t.Helper()
	pods := map[string]bool{}
	for _, p := range nginxPods(t, instance) {
		pods[p.name] = true
		restarts += int(p.restarts)
	}
	events, err := kubeClient(t).CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=Killing,involvedObject.kind=Pod"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if pods[e.InvolvedObject.Name] && strings.Contains(e.Message, "failed liveness probe") {
			kills += int(max(e.Count, 1))
		}
	}
	return kills, restarts
}

// badWriteTable prints the rows of measureBadWrite.
func badWriteTable(rows []badWriteFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| replicas | mode | requests | failed | failed share | first failure | last failure | how it ended |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		share := 0.0
		if r.requests > 0 {
			share = 100 * float64(r.failed) / float64(r.requests)
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %.1f%% | %s | %s | %s |\n", r.replicas, r.mode, r.requests, r.failed, share,
			r.firstFailure.Round(10*time.Millisecond), r.lastOne.Round(10*time.Millisecond), r.ended)
	}
	return b.String()
}
