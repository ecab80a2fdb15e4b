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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// hpaManager is the field manager of a HorizontalPodAutoscaler's writes through /scale:
// kube-controller-manager's client, recorded against the scale subresource.
const hpaManager = "kube-controller-manager"

// autoscaledManifest is an NginxOperator with CPU requests, as server-side applied by its
// owner; replicas is left out when empty.
func autoscaledManifest(replicas string) string {
	m := `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: autoscaled, namespace: default}
spec:
  resources: {requests: {cpu: 20m}}
`
	if replicas != "" {
		m += "  replicas: " + replicas + "\n"
	}
	return m
}

const autoscalerManifest = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: autoscaled, namespace: default}
spec:
  scaleTargetRef: {apiVersion: operator.example.com/v1alpha2, kind: NginxOperator, name: autoscaled}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  # The defaults wait five minutes before scaling down; the test does not.
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 0
      policies: [{type: Percent, value: 100, periodSeconds: 15}]
`

// autoscalesOnCPU drives an NginxOperator with an autoscaling/v2 HPA on CPU, with real
// metrics from metrics-server: a bounded load through the Service scales it up, its end
// scales it down, and only the HPA ever writes spec.replicas.
func autoscalesOnCPU(t *testing.T) {
	t.Cleanup(func() {
		kubectl(t, "", "delete", "hpa", "autoscaled", "--ignore-not-found")
		kubectl(t, "", "delete", "ngx", "autoscaled", "--ignore-not-found")
	})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.Run("an HPA cannot scale an NginxOperator in QPS mode, and says why", hpaRefusedInQPSMode)
	}()
	defer wg.Wait()

	mustKubectl(t, autoscaledManifest(""), "apply", "--server-side", "-f", "-")
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=180s", "ngx/autoscaled")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := recordReplicaWrites(ctx, t)

	mustKubectl(t, autoscalerManifest, "apply", "-f", "-")
	start := time.Now()
	waitFor(t, 3*time.Minute, "the HPA to read the pods' CPU from metrics-server", func() bool {
		return get(t, "get", "hpa", "autoscaled", "-o", `jsonpath={.status.conditions[?(@.type=="ScalingActive")].status}`) == "True"
	})
	t.Logf("HPA reads CPU after %s; kubectl top pods:\n%s", framework.Describe(time.Since(start)),
		get(t, "top", "pods", "-l", "app.kubernetes.io/instance=autoscaled"))

	clusterIP := get(t, "get", "service", "autoscaled", "-o", "jsonpath={.spec.clusterIP}")
	load := startLoad(t, clusterIP+":80", 2, 3*time.Minute, 1_000_000)
	loadStart := time.Now()
	scaledUp := waitFor(t, 3*time.Minute, "the HPA to scale the NginxOperator up", func() bool {
		return replicas(t) > 1
	})
	hpa := framework.Measure(t, "autoscaling")
	upTo := replicas(t)
	hpa.Duration("scaled-up", scaledUp, "the HPA scaled the NginxOperator up, after the load started")
	hpa.Count("replicas-scaled-to", upTo, "replicas", "spec.replicas the HPA first wrote, from 1")
	t.Logf("scaled up to %d replicas %s after the load started", upTo, framework.Describe(scaledUp))

	// While the HPA holds spec.replicas, the owner's apply without replicas keeps its count,
	// and an apply with replicas conflicts with the HPA.
	held := replicas(t)
	if out := mustKubectl(t, autoscaledManifest(""), "apply", "--server-side", "-f", "-", "-o", "jsonpath={.spec.replicas}"); out == "1" {
		t.Errorf("an apply without replicas reset the HPA's %d replicas to 1", held)
	}
	_, errOut, err := kubectl(t, autoscaledManifest("1"), "apply", "--server-side", "-f", "-")
	if err == nil || !strings.Contains(errOut, "conflict") || !strings.Contains(errOut, ".spec.replicas") || !strings.Contains(errOut, hpaManager) {
		t.Errorf("an apply with replicas: 1 while the HPA holds them: err %v, %s", err, errOut)
	} else {
		t.Logf("an apply with replicas while the HPA holds them: %s", strings.TrimSpace(errOut))
	}

	// The load lasts until the controller has followed the HPA with more Ready pods (or its
	// 3 minutes are up: a CI run once saw the HPA scale up after 22 s and no second pod
	// Ready in the minute it had then): more would only take CPU from the rest of the machine.
	most := 0
	if !framework.Poll(4*time.Minute, time.Second, func() bool {
		if most = max(most, len(readyPods(t, "default", "app.kubernetes.io/instance=autoscaled"))); most >= 2 {
			load.stop()
		}
		return load.done()
	}) {
		t.Fatal("the load still runs 4m after it started, past its 3 minutes")
	}
	sent, failed := load.result()
	t.Logf("load: %d requests in %s (%d failed), up to %d Ready pods, spec.replicas %d; kubectl top pods:\n%s",
		sent, framework.Describe(time.Since(loadStart)), failed, most, replicas(t),
		get(t, "top", "pods", "-l", "app.kubernetes.io/instance=autoscaled"))
	if most < 2 {
		t.Errorf("at most %d Ready pods under load: the controller did not follow the HPA", most)
	}
	stopped := time.Now()
	waitFor(t, 4*time.Minute, "the HPA to scale back to 1 replica and the controller to follow", func() bool {
		return replicas(t) == 1 && len(readyPods(t, "default", "app.kubernetes.io/instance=autoscaled")) == 1
	})
	hpa.Duration("scaled-back", time.Since(stopped), "back to 1 replica and 1 pod, after the load stopped")
	t.Logf("back to 1 replica and 1 pod %s after the load stopped", framework.Describe(time.Since(stopped)))

	cancel()
	writes := changes()
	var byHPA, byOthers int
	for _, w := range writes {
		if w.manager == hpaManager+"/scale" {
			byHPA++
		} else {
			byOthers++
			t.Errorf("spec.replicas %d written by %s, not by the HPA", w.replicas, w.manager)
		}
	}
	t.Logf("spec.replicas writes: %d by the HPA through /scale, %d by anyone else: %v", byHPA, byOthers, writes)
	if byHPA < 2 {
		t.Errorf("%d writes of spec.replicas by the HPA, want a scale-up and a scale-down", byHPA)
	}
	if got := get(t, "get", "hpa", "autoscaled", "-o", `jsonpath={.status.conditions[?(@.type=="AbleToScale")].status}`); got != "True" {
		t.Errorf("HPA AbleToScale = %q", got)
	}
}

func replicas(t *testing.T) int {
	n, _ := strconv.Atoi(get(t, "get", "ngx", "autoscaled", "-o", "jsonpath={.spec.replicas}"))
	return n
}

// replicaWrite is a change of spec.replicas as a watch saw it, with the field's owner.
type replicaWrite struct {
	replicas int32
	manager  string // manager/subresource of the managedFields entry owning spec.replicas
}

func (w replicaWrite) String() string { return fmt.Sprintf("%d by %s", w.replicas, w.manager) }

// recordReplicaWrites watches the NginxOperator autoscaled and records each change of
// spec.replicas with who owns the field afterwards; the returned function stops and
// reports.
func recordReplicaWrites(ctx context.Context, t *testing.T) func() []replicaWrite {
	t.Helper()
	nos := operatorClient(t).OperatorV1alpha2().NginxOperators("default")
	w, err := nos.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=autoscaled"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		writes []replicaWrite
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		last := int32(-1)
		for ev := range w.ResultChan() {
			no, ok := ev.Object.(*v1alpha2.NginxOperator)
			if !ok || ev.Type != watch.Modified && ev.Type != watch.Added || no.Spec.Replicas == nil {
				continue
			}
			if r := *no.Spec.Replicas; r != last {
				if last >= 0 {
					mu.Lock()
					writes = append(writes, replicaWrite{replicas: r, manager: replicasOwner(no)})
					mu.Unlock()
				}
				last = r
			}
		}
	}()
	return func() []replicaWrite {
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return writes
	}
}

// replicasOwner names the managedFields entries that own spec.replicas.
func replicasOwner(no *v1alpha2.NginxOperator) string {
	var owners []string
	for _, e := range no.ManagedFields {
		var fields struct {
			Spec map[string]json.RawMessage `json:"f:spec"`
		}
		if e.FieldsV1 != nil && json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields) == nil && fields.Spec["f:replicas"] != nil {
			owners = append(owners, e.Manager+"/"+e.Subresource)
		}
	}
	return strings.Join(owners, ",")
}

// load is a bounded HTTP load: a fixed number of workers for at most a duration and at
// most a number of requests, or until stopped, to a pod or Service address of the local
// node only.
type load struct {
	issued, sent, failed atomic.Int64
	finished             chan struct{}
	// stop ends the load early, or at its duration; requests in flight finish.
	stop context.CancelFunc
	ctx  context.Context
}

func startLoad(t *testing.T, addr string, workers int, d time.Duration, maxRequests int64) *load {
	t.Helper()
	if _, err := httpGet(addr); err != nil {
		t.Fatalf("the load's target %s: %v", addr, err)
	}
	l := &load{finished: make(chan struct{})}
	l.ctx, l.stop = context.WithTimeout(context.Background(), d)
	t.Cleanup(l.stop)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.ctx.Err() == nil && l.issued.Add(1) <= maxRequests {
				l.sent.Add(1)
				resp, err := client.Get("http://" + addr + "/")
				if err != nil {
					l.failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	go func() { wg.Wait(); close(l.finished) }()
	return l
}

func (l *load) done() bool {
	select {
	case <-l.finished:
		return true
	default:
		return false
	}
}

func (l *load) result() (sent, failed int64) { return l.sent.Load(), l.failed.Load() }

// hpaRefusedInQPSMode: in QPS mode the replica count follows spec.qps and /scale refuses
// other counts, so an HPA that wants more reports AbleToScale=False with the reason.
func hpaRefusedInQPSMode(t *testing.T) {
	t.Cleanup(func() {
		kubectl(t, "", "delete", "hpa", "sized-by-qps", "--ignore-not-found")
		kubectl(t, "", "delete", "ngx", "sized-by-qps", "--ignore-not-found")
	})
	mustKubectl(t, `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: sized-by-qps, namespace: default}
spec:
  resources: {requests: {cpu: 20m}}
  qps: {singlePodQPS: 100, totalQPS: 150}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: sized-by-qps, namespace: default}
spec:
  scaleTargetRef: {apiVersion: operator.example.com/v1alpha2, kind: NginxOperator, name: sized-by-qps}
  minReplicas: 3
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
`, "apply", "-f", "-")
	var msg string
	waitFor(t, 2*time.Minute, "the HPA to report that it cannot scale", func() bool {
		msg = get(t, "get", "hpa", "sized-by-qps", "-o", `jsonpath={.status.conditions[?(@.type=="AbleToScale")].status} {.status.conditions[?(@.type=="AbleToScale")].reason}: {.status.conditions[?(@.type=="AbleToScale")].message}`)
		return strings.HasPrefix(msg, "False FailedUpdateScale") && strings.Contains(msg, "QPS mode")
	})
	t.Logf("HPA: %s", msg)
	if got := get(t, "get", "ngx", "sized-by-qps", "-o", "jsonpath={.status.replicas}"); got != "2" {
		t.Errorf("the NginxOperator in QPS mode runs %q replicas, want ceil(150/100) = 2", got)
	}
}
