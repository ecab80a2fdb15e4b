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

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Bench runs the scenarios against every served (target, format) pair, round by round,
// rotating which target goes first so that a noisy moment does not always hit the same
// one.
type Bench struct {
	cfg       Settings
	targets   []*Target
	clients   map[string][]*Client // target name -> served clients
	resources *Resources
	logf      func(format string, args ...any)
	// stored is how many benchmark objects each target holds: names obj-000000 onwards.
	stored map[string]int
	accs   map[string]*acc
	order  []string
	// reviews are the SubjectAccessReviews our apiserver sent during each GET phase.
	reviews []ReviewPoint
}

// round is what one client measured in one round.
type round struct {
	latencies []time.Duration
	elapsed   time.Duration
	ops       int
	bytes     float64
	pages     int
	errors    int
	// items, when set, makes the rate objects per second instead of operations.
	items int
}

// acc gathers the rounds of one (op, size, target, format).
type acc struct {
	op                     string
	size                   int
	client                 *Client
	p50, p99, rates, bytes []float64
	count, errors, pages   int
	cpu                    map[string]float64
}

func objectName(i int) string { return fmt.Sprintf("obj-%06d", i) }

// served lists the clients measured for a target, in format order.
func (b *Bench) served(t *Target) []*Client { return b.clients[t.Name] }

// errSkip is what a scenario returns for a client it does not measure.
var errSkip = errors.New("not measured by this scenario")

// eachRound runs fn for every served client, round after round, with the targets'
// order rotated each round.
func (b *Bench) eachRound(ctx context.Context, op string, size int, fn func(r int, c *Client) (round, error)) error {
	rounds := b.cfg.Rounds
	start := time.Now()
	for r := range rounds {
		for i := range b.targets {
			t := b.targets[(i+r)%len(b.targets)]
			for _, c := range b.served(t) {
				if err := ctx.Err(); err != nil {
					return err
				}
				before, err := b.resources.CPU()
				if err != nil {
					return err
				}
				res, err := fn(r, c)
				if errors.Is(err, errSkip) {
					continue
				}
				if err != nil {
					return fmt.Errorf("%s %s at %d objects: %w", op, c.Key(), size, err)
				}
				after, err := b.resources.CPU()
				if err != nil {
					return err
				}
				b.record(op, size, c, res, cpuDelta(before, after))
			}
		}
	}
	b.logf("  %-15s at %5d objects: %d rounds in %s", op, size, rounds, time.Since(start).Round(100*time.Millisecond))
	return nil
}

func (b *Bench) record(op string, size int, c *Client, res round, cpu map[string]float64) {
	key := fmt.Sprintf("%s/%d/%s", op, size, c.Key())
	a := b.accs[key]
	if a == nil {
		a = &acc{op: op, size: size, client: c, cpu: map[string]float64{}}
		b.accs[key] = a
		b.order = append(b.order, key)
	}
	a.p50 = append(a.p50, Percentile(res.latencies, 50))
	a.p99 = append(a.p99, Percentile(res.latencies, 99))
	if perSecond := res.ops; res.elapsed > 0 && perSecond > 0 {
		if res.items > 0 {
			perSecond = res.items
		}
		a.rates = append(a.rates, float64(perSecond)/res.elapsed.Seconds())
	}
	if !math.IsNaN(res.bytes) {
		a.bytes = append(a.bytes, res.bytes)
	}
	a.count += res.ops
	a.errors += res.errors
	a.pages = res.pages
	for name, v := range cpu {
		a.cpu[name] += v
	}
}

// results turns the gathered rounds into medians with their spread.
func (b *Bench) results(rated map[string]bool) []OpResult {
	out := make([]OpResult, 0, len(b.order))
	for _, key := range b.order {
		a := b.accs[key]
		o := OpResult{Op: a.op, Size: a.size, Target: a.client.Target.Name, Format: a.client.Format.Name,
			Count: a.count, Errors: a.errors, Pages: a.pages,
			P50: SpreadOf(a.p50), P99: SpreadOf(a.p99), CPUms: map[string]float64{}}
		if rated[a.op] {
			s := SpreadOf(a.rates)
			o.Rate = &s
		}
		if len(a.bytes) > 0 {
			s := SpreadOf(a.bytes)
			o.Bytes = &s
		}
		for name, sec := range a.cpu {
			if a.count > 0 {
				o.CPUms[name] = sec * 1000 / float64(a.count)
			}
		}
		out = append(out, o)
	}
	return out
}

// pool runs jobs on the client's concurrent workers and times each one.
func pool(ctx context.Context, c *Client, jobs int, job func(ctx context.Context, w, i int) (time.Duration, error)) round {
	var (
		mu  sync.Mutex
		res = round{latencies: make([]time.Duration, 0, jobs), bytes: math.NaN()}
		wg  sync.WaitGroup
	)
	next := make(chan int)
	start := time.Now()
	for w := range len(c.workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				d, err := job(ctx, w, i)
				mu.Lock()
				if err != nil {
					res.errors++
				} else {
					res.latencies = append(res.latencies, d)
					res.ops++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// timed measures one call.
func timed(fn func() error) (time.Duration, error) {
	start := time.Now()
	err := fn()
	return time.Since(start), err
}

// share splits n into parts as equal as possible; part i of parts.
func share(n, parts, i int) int {
	q, r := n/parts, n%parts
	if i < r {
		return q + 1
	}
	return q
}

// grow creates objects until every target holds size of them, each served format
// creating an equal share in every round.
func (b *Bench) grow(ctx context.Context, size int) error {
	from := map[string]int{}
	for _, t := range b.targets {
		from[t.Name] = b.stored[t.Name]
	}
	return b.eachRound(ctx, opCreate, size, func(r int, c *Client) (round, error) {
		t := c.Target
		formats := len(b.served(t))
		n := share(size-from[t.Name], b.cfg.Rounds*formats, r*formats+formatIndex(b.served(t), c))
		first := b.stored[t.Name]
		res := pool(ctx, c, n, func(ctx context.Context, w, i int) (time.Duration, error) {
			obj, err := t.newObject(objectName(first + i))
			if err != nil {
				return 0, err
			}
			return timed(func() error { return c.create(ctx, w, obj) })
		})
		if res.errors > 0 {
			return res, fmt.Errorf("%d of %d creates failed", res.errors, n)
		}
		b.stored[t.Name] += n
		return res, nil
	})
}

func formatIndex(clients []*Client, c *Client) int {
	for i, x := range clients {
		if x == c {
			return i
		}
	}
	return -1
}

// gets reads random stored objects concurrently.
func (b *Bench) gets(ctx context.Context, size int) error {
	before, err := b.resources.AuthzReviews(ctx)
	if err != nil {
		return err
	}
	requests := 0
	err = b.eachRound(ctx, opGet, size, func(r int, c *Client) (round, error) {
		if c.Target.Stores == operatorAPIServer {
			requests += b.cfg.GetsPerRound
		}
		n := b.stored[c.Target.Name]
		res := pool(ctx, c, b.cfg.GetsPerRound, func(ctx context.Context, w, i int) (time.Duration, error) {
			name := objectName(rand.IntN(n))
			return timed(func() error { _, err := c.get(ctx, w, name); return err })
		})
		return res, nil
	})
	if err != nil {
		return err
	}
	after, err := b.resources.AuthzReviews(ctx)
	if err != nil {
		return err
	}
	b.reviews = append(b.reviews, ReviewPoint{Size: size, Requests: requests, Reviews: after - before})
	b.logf("  %d SubjectAccessReviews for %d GETs served by our apiserver", int(after-before), requests)
	return nil
}

// lists reads the whole collection in one call, one list at a time (a list's own
// latency, not a queue's).
func (b *Bench) lists(ctx context.Context, size int) error {
	return b.listAll(ctx, opList, size, func(c *Client) (listPage, error) { return c.list(ctx, 0, metav1.ListOptions{}) })
}

// plainLists is lists by a client that does not ask for gzip: the server's own writes
// reach it unchanged, however it cuts them. (Through the aggregator, kube-apiserver's
// proxy still asks our apiserver for gzip and decompresses.)
func (b *Bench) plainLists(ctx context.Context, size int) error {
	return b.listAll(ctx, opListPlain, size, func(c *Client) (listPage, error) { return c.listPlain(ctx, metav1.ListOptions{}) })
}

// listsPerRound keeps the objects listed per round at most those of perRound lists of
// 10000 objects: a 50k-object list is read once per round, not four times.
func listsPerRound(perRound, size int) int {
	if size <= 10000 {
		return perRound
	}
	return max(1, perRound*10000/size)
}

func (b *Bench) listAll(ctx context.Context, op string, size int, list func(c *Client) (listPage, error)) error {
	return b.eachRound(ctx, op, size, func(r int, c *Client) (round, error) {
		res := round{bytes: math.NaN()}
		for range listsPerRound(b.cfg.ListsPerRound, size) {
			var page listPage
			d, err := timed(func() error {
				var err error
				page, err = list(c)
				return err
			})
			if err != nil {
				return res, err
			}
			if page.Items != b.stored[c.Target.Name] {
				return res, fmt.Errorf("list returned %d objects, %d stored", page.Items, b.stored[c.Target.Name])
			}
			res.latencies = append(res.latencies, d)
			res.ops++
			res.bytes = float64(page.Bytes)
		}
		return res, nil
	})
}

// paginate reads the whole collection in pages of PageLimit, once per round.
func (b *Bench) paginate(ctx context.Context, size int) error {
	return b.eachRound(ctx, opPaginate, size, func(r int, c *Client) (round, error) {
		res := round{}
		items, bytes := 0, 0
		start := time.Now()
		opts := metav1.ListOptions{Limit: b.cfg.PageLimit}
		for {
			page, err := c.list(ctx, 0, opts)
			if err != nil {
				return res, err
			}
			res.pages++
			items += page.Items
			bytes += page.Bytes
			if page.Continue == "" {
				break
			}
			opts.Continue = page.Continue
		}
		res.elapsed = time.Since(start)
		if items != b.stored[c.Target.Name] {
			return res, fmt.Errorf("pages held %d objects, %d stored", items, b.stored[c.Target.Name])
		}
		// One operation is one whole pagination; its rate is objects per second.
		res.latencies = []time.Duration{res.elapsed}
		res.ops = 1
		res.bytes = float64(bytes)
		res.items = items
		return res, nil
	})
}

// annotate sets one annotation on a typed or unstructured object.
func annotate(obj runtime.Object, key, value string) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	annotations := accessor.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	accessor.SetAnnotations(annotations)
	return nil
}

// updates replaces distinct objects concurrently: each job reads the object (not timed)
// and writes it back with one annotation changed (timed).
func (b *Bench) updates(ctx context.Context, size int) error {
	return b.eachRound(ctx, opUpdate, size, func(r int, c *Client) (round, error) {
		n := b.stored[c.Target.Name]
		offset := rand.IntN(n)
		jobs := min(b.cfg.UpdatesPerRnd, n)
		res := pool(ctx, c, jobs, func(ctx context.Context, w, i int) (time.Duration, error) {
			obj, err := c.get(ctx, w, objectName((offset+i)%n))
			if err != nil {
				return 0, err
			}
			if err := annotate(obj, "bench.example.com/updated", fmt.Sprint(i)); err != nil {
				return 0, err
			}
			return timed(func() error { return c.update(ctx, w, obj) })
		})
		if res.errors > 0 {
			return res, fmt.Errorf("%d of %d updates failed", res.errors, jobs)
		}
		return res, nil
	})
}

// annotateEach updates n stored objects one at a time from a random one on, setting
// annotation key to prefix-<i>; sending is called with the value just before each
// update is sent.
func (b *Bench) annotateEach(ctx context.Context, c *Client, key string, n int, prefix string, sending func(value string)) error {
	stored := b.stored[c.Target.Name]
	offset := rand.IntN(stored)
	for i := range n {
		obj, err := c.get(ctx, 1, objectName((offset+i)%stored))
		if err != nil {
			return err
		}
		value := fmt.Sprintf("%s-%d", prefix, i)
		if err := annotate(obj, key, value); err != nil {
			return err
		}
		sending(value)
		if err := c.update(ctx, 1, obj); err != nil {
			return err
		}
	}
	return nil
}

// modifiedAnnotation is annotation key of a MODIFIED event's object.
func modifiedAnnotation(ev watch.Event, key string) (string, bool) {
	if ev.Type != watch.Modified {
		return "", false
	}
	accessor, err := meta.Accessor(ev.Object)
	if err != nil {
		return "", false
	}
	return accessor.GetAnnotations()[key], true
}

// watchKey is the annotation whose value each watch-phase write sets; the watcher
// times the event that carries the value it is waiting for.
const watchKey = "bench.example.com/watch"

// watches measures write → event: a watcher on the namespace and one writer updating
// objects one at a time; each latency runs from just before the write is sent to the
// moment the watcher decoded the event carrying that write's value.
func (b *Bench) watches(ctx context.Context, size int) error {
	return b.eachRound(ctx, opWatch, size, func(r int, c *Client) (round, error) {
		res := round{bytes: math.NaN()}
		page, err := c.list(ctx, 0, metav1.ListOptions{Limit: 1})
		if err != nil {
			return res, err
		}
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w, err := c.watch(wctx, page.ResourceVersion)
		if err != nil {
			return res, err
		}
		defer w.Stop()

		var (
			mu        sync.Mutex
			sent      = map[string]time.Time{}
			seen      = map[string]bool{}
			done      = make(chan struct{})
			want      = b.cfg.WatchPerRound
			latencies []time.Duration
		)
		go func() {
			defer close(done)
			for ev := range w.ResultChan() {
				value, ok := modifiedAnnotation(ev, watchKey)
				if !ok {
					continue
				}
				now := time.Now()
				mu.Lock()
				if at, ok := sent[value]; ok && !seen[value] {
					seen[value] = true
					latencies = append(latencies, now.Sub(at))
				}
				complete := len(seen) == want
				mu.Unlock()
				if complete {
					return
				}
			}
		}()
		if err := b.annotateEach(ctx, c, watchKey, want, fmt.Sprintf("%s-%d-%d", c.Format.Name, size, r), func(value string) {
			mu.Lock()
			sent[value] = time.Now()
			mu.Unlock()
		}); err != nil {
			return res, err
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
		cancel()
		mu.Lock()
		defer mu.Unlock()
		res.latencies = append(res.latencies, latencies...)
		res.ops = len(latencies)
		res.errors = want - len(latencies)
		return res, nil
	})
}

// shrink deletes every stored object, each served format deleting an equal share in
// every round.
func (b *Bench) shrink(ctx context.Context, size int) error {
	total := map[string]int{}
	for _, t := range b.targets {
		total[t.Name] = b.stored[t.Name]
	}
	deleted := map[string]int{}
	return b.eachRound(ctx, opDelete, size, func(r int, c *Client) (round, error) {
		t := c.Target
		formats := len(b.served(t))
		n := share(total[t.Name], b.cfg.Rounds*formats, r*formats+formatIndex(b.served(t), c))
		first := deleted[t.Name]
		res := pool(ctx, c, n, func(ctx context.Context, w, i int) (time.Duration, error) {
			name := objectName(first + i)
			return timed(func() error { return c.delete(ctx, w, name) })
		})
		if res.errors > 0 {
			return res, fmt.Errorf("%d of %d deletes failed", res.errors, n)
		}
		deleted[t.Name] += n
		b.stored[t.Name] -= n
		return res, nil
	})
}
