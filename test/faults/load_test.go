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

package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	typedv1alpha2 "github.com/example/nginx-operator/pkg/generated/clientset/versioned/typed/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// loadLabel marks the objects of one load so that checking them is one LIST.
const loadLabel = "faults.example.com/load"

// createLoad is workers creating NginxOperators with unique names as fast as the
// server answers, optionally reading each back. It remembers the uid of every create
// acknowledged with 201 and the name of every create that failed after it may have
// reached the server, so that a check after a fault can tell lost from never written.
type createLoad struct {
	t       testing.TB
	prefix  string
	client  typedv1alpha2.NginxOperatorInterface
	getBack bool
	stopped atomic.Bool
	phase   atomic.Value // string: which part of the fault the outcomes below belong to
	wg      sync.WaitGroup

	mu       sync.Mutex
	acked    map[string]types.UID
	unacked  map[string]string         // name -> how its create failed, when it may have been written
	outcomes map[string]map[string]int // phase -> "create 201", "get 200", "create timeout", ... -> count
	slowest  map[string]time.Duration  // phase -> the longest request
	samples  map[string]string         // "create 500", ... -> the first such error's message
}

// startCreateLoad starts workers on client; stop them with stop.
func startCreateLoad(t testing.TB, client typedv1alpha2.NginxOperatorInterface, prefix string, workers int, getBack bool) *createLoad {
	l := &createLoad{t: t, prefix: prefix, client: client, getBack: getBack,
		acked: map[string]types.UID{}, unacked: map[string]string{}, outcomes: map[string]map[string]int{},
		slowest: map[string]time.Duration{}, samples: map[string]string{}}
	l.setPhase("load")
	for w := range workers {
		l.wg.Add(1)
		go l.work(w)
	}
	t.Cleanup(l.stop)
	return l
}

// setPhase starts counting outcomes under another name (load, kill, outage, ...).
func (l *createLoad) setPhase(p string) { l.phase.Store(p) }

func (l *createLoad) work(worker int) {
	defer l.wg.Done()
	// A refused connection fails at once: a rate limit of one failed create per 20 ms
	// keeps the worker from spinning on a dead server.
	afterFailure := time.NewTicker(20 * time.Millisecond)
	defer afterFailure.Stop()
	for i := 0; !l.stopped.Load(); i++ {
		name := fmt.Sprintf("%s-%d-%d", l.prefix, worker, i)
		obj := &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{loadLabel: l.prefix}}}
		// Outcomes count in the phase the request was sent in.
		phase, sent := l.phase.Load().(string), time.Now()
		// Each request has its own deadline, not the test's: stopping the load lets the
		// requests under way finish instead of cancelling them into ambiguous errors.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		created, err := l.client.Create(ctx, obj, metav1.CreateOptions{})
		cancel()
		l.mu.Lock()
		l.count(phase, "create", err, "201", time.Since(sent))
		switch {
		case err == nil:
			l.acked[name] = created.UID
		case mayHaveBeenWritten(err):
			l.unacked[name] = outcome(err, "")
		}
		l.mu.Unlock()
		if err != nil {
			<-afterFailure.C
			continue
		}
		if l.getBack {
			phase, sent := l.phase.Load().(string), time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := l.client.Get(ctx, name, metav1.GetOptions{})
			cancel()
			l.mu.Lock()
			l.count(phase, "get", err, "200", time.Since(sent))
			l.mu.Unlock()
		}
	}
}

func (l *createLoad) count(phase, verb string, err error, ok string, took time.Duration) {
	if l.outcomes[phase] == nil {
		l.outcomes[phase] = map[string]int{}
	}
	key := verb + " " + outcome(err, ok)
	l.outcomes[phase][key]++
	if err != nil && l.samples[key] == "" {
		l.samples[key] = err.Error()
	}
	l.slowest[phase] = max(l.slowest[phase], took)
}

// outcome names how a request ended: its HTTP status, or what went wrong on the way.
func outcome(err error, ok string) string {
	var status apierrors.APIStatus
	var netErr net.Error
	switch {
	case err == nil:
		return ok
	case errors.As(err, &status):
		return fmt.Sprint(status.Status().Code)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	default:
		return "connection-error"
	}
}

// mayHaveBeenWritten is false only for failures that prove the create was not stored:
// a refused connection never reached the server, a 4xx was rejected before storage
// (except AlreadyExists, which client-go's retry of a create after a 5xx with
// Retry-After would get if the first attempt was stored).
func mayHaveBeenWritten(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code >= 500 || apierrors.IsAlreadyExists(err)
	}
	return !errors.Is(err, syscall.ECONNREFUSED)
}

func (l *createLoad) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// waitAcked waits until at least n creates are acknowledged.
func (l *createLoad) waitAcked(n int, timeout time.Duration) {
	l.t.Helper()
	if !framework.Poll(timeout, 50*time.Millisecond, func() bool { return l.ackedCount() >= n }) {
		l.t.Fatalf("only %d of %d creates acknowledged within %s; outcomes %s", l.ackedCount(), n, timeout, l.outcomeSummary())
	}
}

// stop ends the workers after the requests under way have been answered.
func (l *createLoad) stop() {
	l.stopped.Store(true)
	l.wg.Wait()
}

// outcomeSummary is every phase's outcome counts on one line, e.g.
// "load{create 201=840 get 200=840 slowest=120ms} outage{create timeout=16 slowest=30s}".
func (l *createLoad) outcomeSummary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	phases := make([]string, 0, len(l.outcomes))
	for p := range l.outcomes {
		phases = append(phases, p)
	}
	sort.Strings(phases)
	var b strings.Builder
	for _, p := range phases {
		keys := make([]string, 0, len(l.outcomes[p]))
		for k := range l.outcomes[p] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%d", k, l.outcomes[p][k])
		}
		fmt.Fprintf(&b, "%s{%s slowest=%s} ", p, strings.Join(parts, " "), l.slowest[p].Round(time.Millisecond))
	}
	return strings.TrimSpace(b.String())
}

// requests counts the requests answered so far and how many of them failed.
func (l *createLoad) requests() (total, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, counts := range l.outcomes {
		for key, n := range counts {
			total += n
			if !strings.HasSuffix(key, " 201") && !strings.HasSuffix(key, " 200") {
				failed += n
			}
		}
	}
	return total, failed
}

// errorSamples is the first error message of each kind of failure.
func (l *createLoad) errorSamples() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.samples))
	for k := range l.samples {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %q", k, l.samples[k])
	}
	return strings.Join(parts, "; ")
}

// loadCheck is what a stopped load's objects look like after a fault.
type loadCheck struct {
	acked, present, lost int
	lostNames            []string // acknowledged but missing, or present with another uid
	unacked              int      // creates that failed after they may have reached the server
	unackedPresent       int      // of those, how many were stored anyway
	unexpected           []string // present but never sent or refused before storage
}

func (c loadCheck) String() string {
	return fmt.Sprintf("acknowledged=%d present=%d lost=%d in-flight-errors=%d (of which stored: %d)",
		c.acked, c.present, c.lost, c.unacked, c.unackedPresent)
}

// check lists the load's objects through client, a consistent read from etcd, and
// compares them with what the creates were told. The load must be stopped.
func (l *createLoad) check(ctx context.Context, client typedv1alpha2.NginxOperatorInterface) loadCheck {
	l.t.Helper()
	list, err := client.List(ctx, metav1.ListOptions{LabelSelector: loadLabel + "=" + l.prefix})
	if err != nil {
		l.t.Fatalf("listing the load's objects: %v", err)
	}
	stored := make(map[string]types.UID, len(list.Items))
	for _, o := range list.Items {
		stored[o.Name] = o.UID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := loadCheck{acked: len(l.acked), unacked: len(l.unacked)}
	for name, uid := range l.acked {
		if stored[name] == uid {
			c.present++
		} else {
			c.lostNames = append(c.lostNames, name)
		}
	}
	c.lost = len(c.lostNames)
	for name := range stored {
		_, acked := l.acked[name]
		_, unacked := l.unacked[name]
		switch {
		case unacked:
			c.unackedPresent++
		case !acked:
			c.unexpected = append(c.unexpected, name)
		}
	}
	sort.Strings(c.lostNames)
	return c
}

// record records the check's counts as figures named after prefix.
func (c loadCheck) record(m framework.Figures, prefix string) {
	m.Count(prefix+"-acknowledged", c.acked, "creates", "creates acknowledged with 201 ("+prefix+")")
	m.Count(prefix+"-present", c.present, "creates", "of those, present with their uid after the fault ("+prefix+")")
	m.Count(prefix+"-lost", c.lost, "creates", "of those, lost ("+prefix+")")
}

// assertNothingLost fails the test for every acknowledged create that is gone and for
// every stored object no create could have written.
func (c loadCheck) assertNothingLost(t testing.TB) {
	t.Helper()
	if c.acked == 0 {
		t.Error("no create was acknowledged: the load did not run")
	}
	if c.lost > 0 {
		t.Errorf("%d acknowledged creates lost: %v", c.lost, c.lostNames)
	}
	if len(c.unexpected) > 0 {
		t.Errorf("%d objects stored that no create could have written: %v", len(c.unexpected), c.unexpected)
	}
}
