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
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/example/nginx-operator/test/framework"
)

// TestOverload bursts LISTs and WATCHes at an apiserver in standalone mode, where
// priority and fairness is off and --max-requests-inflight and
// --max-mutating-requests-inflight bound the requests served at once. The server must
// shed what it cannot serve with 429 and Retry-After, never a 5xx, stay ready for its
// probes and keep its memory bounded.
//
// The library's in-flight limit never refuses system:masters (it serves them past the
// limit), and standalone mode authorizes nobody else. So the burst comes from a user
// with a valid certificate and no permissions (429 when the slots are taken, 403 when
// one is free), while the admin LISTs all 2000 objects from a few goroutines, which
// keeps the slots taken and must be served throughout.
func TestOverload(t *testing.T) {
	const (
		seeded         = 2000
		adminListers   = 8 // each LISTs 2000 objects adminListEach times, keeping the 4 slots taken
		adminListEach  = 8
		strangers      = 200 // each LISTs until the admin is done
		strangerPause  = 50 * time.Millisecond
		watchers       = 50
		memoryBoundKiB = 2 << 20 // 2 GiB
	)
	// etcd runs as its own process, as in a cluster: the embedded one shares the Go
	// runtime of the saturated apiserver, and on a loaded 2-core machine its readiness
	// check (2s) failed up to 3 probes in a row.
	etcd := startEtcd(t)
	s := startAPIServer(t, t.TempDir(), "--etcd-servers", etcd.clientURL(),
		"--max-requests-inflight=4", "--max-mutating-requests-inflight=2")
	seed := startCreateLoad(t, s.Client.OperatorV1alpha2().NginxOperators(ns), "seed", 16, false)
	seed.waitAcked(seeded, 5*time.Minute)
	seed.stop()
	stored := seed.ackedCount() // the workers may pass the target by a few

	listURL := s.URL("/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators")
	admin, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	stranger := s.unprivilegedClient("overload-stranger")
	// A LIST of 2000 objects among many on a loaded machine can take longer than the
	// kubeconfig's 30s; a client timeout is not what this test is about.
	admin.Timeout, stranger.Timeout = 3*time.Minute, 3*time.Minute

	memory := sampleMemory(s.PID(), 50*time.Millisecond)
	probes := startReadyzProbes(s, 25*time.Millisecond)
	// A failed assertion must not leave them running past the test.
	t.Cleanup(func() { probes.finish(); _, _ = memory.finish() })
	watchCtx, stopWatches := context.WithCancel(context.Background())
	defer stopWatches()
	var watchesOpen sync.WaitGroup
	watches := &tally{}
	for range watchers {
		watchesOpen.Add(1)
		go func() {
			defer watchesOpen.Done()
			watches.watch(watchCtx, admin, listURL+"?watch=true&allowWatchBookmarks=true")
		}()
	}

	started := time.Now()
	adminLists, strangerLists := &tally{}, &tally{}
	var adminDone, strangersDone sync.WaitGroup
	for range adminListers {
		adminDone.Add(1)
		go func() {
			defer adminDone.Done()
			for range adminListEach {
				adminLists.get(admin, listURL)
			}
		}()
	}
	adminFinished := make(chan struct{})
	for range strangers {
		strangersDone.Add(1)
		go func() {
			defer strangersDone.Done()
			for {
				strangerLists.get(stranger, listURL)
				select {
				case <-adminFinished:
					return
				case <-time.After(strangerPause):
				}
			}
		}()
	}
	adminDone.Wait()
	close(adminFinished)
	strangersDone.Wait()
	burst := time.Since(started)
	stopWatches()
	watchesOpen.Wait()
	probeFigures := probes.finish()
	peakKiB, err := memory.finish()
	if err != nil {
		t.Fatal(err)
	}

	t.Logf("overload, --max-requests-inflight=4 --max-mutating-requests-inflight=2, %d objects, %d goroutines x %d admin LISTs, %d unprivileged goroutines LISTing meanwhile, %d WATCHes, for %s: "+
		"admin (system:masters) LISTs %s; unprivileged user's LISTs %s; WATCHes %s; /readyz probes %s; peak RSS %d MiB",
		stored, adminListers, adminListEach, strangers, watchers, burst.Round(time.Millisecond),
		adminLists, strangerLists, watches, probeFigures, peakKiB>>10)

	m := framework.Measure(t, "overload-standalone")
	m.Count("unprivileged-lists", strangerLists.total(), "requests", "LISTs of a user without permissions during the burst")
	m.Count("unprivileged-lists-429", strangerLists.count(http.StatusTooManyRequests), "requests", "of those, answered 429 with Retry-After")
	m.Value("peak-rss", float64(peakKiB)/1024, "MiB", "the apiserver's peak RSS during the burst")

	adminLists.assertOnly(t, "admin LISTs", http.StatusOK)
	strangerLists.assertOnly(t, "unprivileged LISTs", http.StatusTooManyRequests, http.StatusForbidden)
	if strangerLists.count(http.StatusTooManyRequests) == 0 {
		t.Error("no LIST was refused with 429: the in-flight limit did not apply")
	}
	if strangerLists.missingRetryAfter > 0 {
		t.Errorf("%d answers 429 without Retry-After", strangerLists.missingRetryAfter)
	}
	watches.assertOnly(t, "WATCHes", http.StatusOK)
	// A kubelet takes a pod out of its Service after failureThreshold (default 3) failed
	// probes in a row; a single slow etcd check on a saturated machine does not.
	if probeFigures.total == 0 || probeFigures.refused > 0 || probeFigures.mostInARow >= 3 {
		t.Errorf("/readyz not ready during the burst: %s", probeFigures)
	}
	if peakKiB > memoryBoundKiB {
		t.Errorf("peak RSS %d MiB, over the %d MiB bound", peakKiB>>10, memoryBoundKiB>>10)
	}
}

// tally counts how requests were answered.
type tally struct {
	mu                sync.Mutex
	answers           map[string]int // "200", "429", "error: ..."
	missingRetryAfter int
}

// total is how many requests were answered in any way.
func (t *tally) total() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.answers {
		n += c
	}
	return n
}

func (t *tally) get(c *http.Client, url string) {
	resp, err := c.Get(url)
	if err != nil {
		t.record("error: "+err.Error(), false)
		return
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if err != nil {
		t.record("body error: "+err.Error(), false)
		return
	}
	t.record(fmt.Sprint(resp.StatusCode), resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "")
}

// watch opens a watch, counts how it was answered and reads its events until ctx ends.
func (t *tally) watch(ctx context.Context, c *http.Client, url string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.record("error: "+err.Error(), false)
		return
	}
	resp, err := c.Do(req)
	if err != nil {
		t.record("error: "+err.Error(), false)
		return
	}
	defer resp.Body.Close()
	t.record(fmt.Sprint(resp.StatusCode), resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "")
	_, _ = io.Copy(io.Discard, resp.Body)
}

func (t *tally) record(answer string, missingRetryAfter bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.answers == nil {
		t.answers = map[string]int{}
	}
	t.answers[answer]++
	if missingRetryAfter {
		t.missingRetryAfter++
	}
}

func (t *tally) count(code int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.answers[fmt.Sprint(code)]
}

// String is e.g. "600 requests: 200=412 429=188".
func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.answers))
	total := 0
	for k, n := range t.answers {
		keys = append(keys, k)
		total += n
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, t.answers[k])
	}
	return fmt.Sprintf("%d requests: %s", total, strings.Join(parts, " "))
}

// assertOnly fails the test for every answer that is not one of codes (a 5xx, an
// error on the way) and when there was no answer at all.
func (t *tally) assertOnly(tb testing.TB, what string, codes ...int) {
	tb.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	allowed := map[string]bool{}
	for _, c := range codes {
		allowed[fmt.Sprint(c)] = true
	}
	if len(t.answers) == 0 {
		tb.Errorf("%s: no answers", what)
	}
	for answer, n := range t.answers {
		if !allowed[answer] {
			tb.Errorf("%s: %d answered %s, want only %v", what, n, answer, codes)
		}
	}
}

// readyzProbes polls /readyz anonymously, as a kubelet readiness probe does, until finished.
type readyzProbes struct {
	stop, done chan struct{}
	stopOnce   sync.Once
	figures    probeFigures
}

type probeFigures struct {
	total, failed int
	refused       int // answered 429: the in-flight limit applied to a probe
	mostInARow    int // the longest run of failed probes
	firstFailure  string
}

func (f probeFigures) String() string {
	if f.failed == 0 {
		return fmt.Sprintf("%d, 0 failed", f.total)
	}
	return fmt.Sprintf("%d, %d failed, %d with 429, at most %d in a row (first: %s)", f.total, f.failed, f.refused, f.mostInARow, f.firstFailure)
}

func startReadyzProbes(s *apiserver, every time.Duration) *readyzProbes {
	p := &readyzProbes{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		inARow := 0
		for {
			ok, why := s.ready(context.Background())
			p.figures.total++
			inARow++
			if ok {
				inARow = 0
			} else {
				p.figures.failed++
				p.figures.mostInARow = max(p.figures.mostInARow, inARow)
				if strings.HasPrefix(why, fmt.Sprintf("HTTP %d", http.StatusTooManyRequests)) {
					p.figures.refused++
				}
				if p.figures.firstFailure == "" {
					p.figures.firstFailure = why
				}
			}
			select {
			case <-p.stop:
				return
			case <-time.After(every):
			}
		}
	}()
	return p
}

func (p *readyzProbes) finish() probeFigures {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
	return p.figures
}
