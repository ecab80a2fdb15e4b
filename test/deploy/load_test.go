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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

// loadResult counts what a read/write loop saw.
type loadResult struct {
	requests  int
	retried   int      // failures a client may retry: 503, 429, 504, dropped connections
	failed    []string // failures it may not, or retries that never ended
	created   []string // names whose create was acknowledged
	retryable map[string]int
}

// record records the loop's counts as figures named after prefix.
func (r *loadResult) record(m framework.Figures, prefix string) {
	m.Count(prefix+"-requests", r.requests, "requests", "requests of the create, get, update and list loop through kube-apiserver")
	m.Count(prefix+"-retried", r.retried, "requests", "of those, answered with a failure a client retries (503, 429, 504, a dropped connection)")
	m.Count(prefix+"-failed", len(r.failed), "requests", "of those, failed in a way a client does not retry")
}

// maxObjects caps the creates of one loop: past it, the loop reads and updates a known
// set of objects (each also a Deployment and a Service) instead of filling the cluster.
const maxObjects = 60

// Requests of the loop answered before the disruption (load under way when it starts)
// and after it, counted from when the last of the system's pods that the disruption
// stopped is gone (load served once it is over): about 3 s of the loop each when idle.
const loadBefore, loadAfter = 100, 100

// clientRequestTimeout is how long a test's client waits for one request: generous, since a
// loaded two-core machine answers slowly, and a request cut at it counts as failed.
const clientRequestTimeout = 20 * time.Second

// runLoad creates (up to maxObjects), reads, updates and lists NginxOperators in
// namespace ns through kube-apiserver until stop is closed, retrying what clients are
// allowed to retry, for a minute at most per request. It adds every answered request
// to answered as it goes.
func runLoad(client clientset.Interface, ns, prefix string, stop <-chan struct{}, answered *atomic.Int64) *loadResult {
	res := &loadResult{retryable: map[string]int{}}
	nos := client.OperatorV1alpha2().NginxOperators(ns)
	// Rate limits: a round of requests per 20 ms at most, and a retry per 200 ms.
	pace, retryPace := time.NewTicker(20*time.Millisecond), time.NewTicker(200*time.Millisecond)
	defer pace.Stop()
	defer retryPace.Stop()
	do := func(what string, req func(ctx context.Context) error) bool {
		deadline := time.Now().Add(time.Minute)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), clientRequestTimeout)
			err := req(ctx)
			cancel()
			res.requests++
			switch {
			case err == nil:
				answered.Add(1)
				return true
			case !retryable(err):
				res.failed = append(res.failed, fmt.Sprintf("%s: %v", what, err))
				return false
			case time.Now().After(deadline):
				res.failed = append(res.failed, fmt.Sprintf("%s: still failing after a minute of retries: %v", what, err))
				return false
			}
			res.retried++
			res.retryable[err.Error()]++
			<-retryPace.C
		}
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return res
		default:
		}
		name := fmt.Sprintf("%s-%d", prefix, i%maxObjects)
		if i < maxObjects {
			obj := &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0))}}
			if do("create "+name, func(ctx context.Context) error {
				_, err := nos.Create(ctx, obj, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) { // an earlier attempt landed before its answer was lost
					return nil
				}
				return err
			}) {
				res.created = append(res.created, name)
			}
		}
		do("get and update "+name, func(ctx context.Context) error {
			got, err := nos.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && i < maxObjects {
				return nil // its create failed, and was counted
			}
			if err != nil {
				return err
			}
			got.Spec.ForceRedeploy = fmt.Sprint(i)
			_, err = nos.Update(ctx, got, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				return nil // the controller's status write won; the object is intact
			}
			return err
		})
		do("list", func(ctx context.Context) error {
			_, err := nos.List(ctx, metav1.ListOptions{Limit: 50})
			return err
		})
		<-pace.C
	}
}

// retryable is what a well-behaved client retries: the aggregator's 503 while an
// endpoint goes away, throttling, gateway timeouts, and connections refused or cut
// mid-request. Anything else (TLS errors, client timeouts, 4xx, 500) is a failure.
func retryable(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServerTimeout(err) || utilnet.IsConnectionReset(err) || utilnet.IsConnectionRefused(err) || utilnet.IsProbableEOF(err)
}

// underLoad runs the loop while disrupt runs, watches both APIServices all along, and
// checks that nothing failed that a client could not retry and that every acknowledged
// create is there afterwards.
func underLoad(t *testing.T, ns string, disrupt func()) *loadResult {
	t.Helper()
	mustKubectl(t, "", "create", "namespace", ns)
	// The loop's NginxOperators are gone before the next test starts, so that test counts
	// only objects meant to stay; the namespace's other content (the Deployments and
	// Services they owned, which the garbage collector deletes) may still be going.
	t.Cleanup(func() {
		start := time.Now()
		kubectl(t, "", "delete", "ngx", "--all", "-n", ns, "--timeout=3m")
		kubectl(t, "", "delete", "namespace", ns, "--wait=false")
		t.Logf("the NginxOperators of namespace %s deleted in %s", ns, framework.Describe(time.Since(start)))
	})
	client := operatorClient(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var res *loadResult
	var answered atomic.Int64
	wg.Add(1)
	go func() { defer wg.Done(); res = runLoad(client, ns, "load", stop, &answered) }()
	var unavailable []string
	var seen sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			out := get(t, "get", "apiservice", "v1alpha1.operator.example.com", "v1alpha2.operator.example.com",
				"-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Available")].status} {end}`)
			if out != "v1alpha1.operator.example.com=True v1alpha2.operator.example.com=True " {
				seen.Lock()
				unavailable = append(unavailable, fmt.Sprintf("%s %q", time.Now().Format(time.TimeOnly), out))
				seen.Unlock()
			}
		}
	}()
	waitAnswered := func(n int64, when string, timeout time.Duration) {
		t.Helper()
		from, start := answered.Load(), time.Now()
		if !framework.Poll(timeout, 100*time.Millisecond, func() bool { return answered.Load()-from >= n }) {
			t.Errorf("the load loop had %d requests answered %s in %s, want %d", answered.Load()-from, when, timeout, n)
			return
		}
		t.Logf("%d requests answered %s, in %s", n, when, framework.Describe(time.Since(start)))
	}
	waitAnswered(loadBefore, "before the disruption", 2*time.Minute)
	disrupt()
	// The loop keeps running while the replaced pods shut down (the apiserver's
	// shutdown delay, etcd's graceful stop); "after" starts once none is left.
	waitFor(t, 3*time.Minute, "no pod of "+systemNS+" terminating", func() bool {
		return strings.TrimSpace(get(t, "get", "pods", "-n", systemNS, "-o", `jsonpath={range .items[*]}{.metadata.deletionTimestamp}{"\n"}{end}`)) == ""
	})
	waitAnswered(loadAfter, "after the disruption", 5*time.Minute)
	close(stop)
	wg.Wait()

	t.Logf("%d requests, %d retried, %d failed beyond retry, %d creates acknowledged", res.requests, res.retried, len(res.failed), len(res.created))
	for msg, n := range res.retryable {
		t.Logf("retried %d times: %s", n, msg)
	}
	for _, f := range res.failed {
		t.Errorf("request failed in a way a client may not retry: %s", f)
	}
	if len(unavailable) > 0 {
		t.Errorf("the APIServices were not Available at %d checks: %v", len(unavailable), unavailable)
	}
	checkAllPresent(t, client, ns, res.created)
	return res
}

func checkAllPresent(t *testing.T, client clientset.Interface, ns string, names []string) {
	t.Helper()
	list, err := client.OperatorV1alpha2().NginxOperators(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, o := range list.Items {
		present[o.Name] = true
	}
	lost := 0
	for _, n := range names {
		if !present[n] {
			lost++
			t.Errorf("acknowledged create of %s/%s is lost", ns, n)
		}
	}
	t.Logf("%d acknowledged creates, %d present, %d lost", len(names), len(names)-lost, lost)
}

func ptr[T any](v T) *T { return &v }
