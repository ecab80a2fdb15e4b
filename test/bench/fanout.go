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
	"fmt"
	"math"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// clientFormat is the format a client of the target would pick: JSON for the CRD (the
// one every CRD client has), protobuf for ours.
func clientFormat(target string) string {
	if target == "crd" {
		return "json"
	}
	return "protobuf"
}

// fanout measures write → event with many watchers: Watchers watches on the namespace,
// spread over the client's connections, and one writer updating FanoutWrites objects one at
// a time. Every watcher must see every write; each (watcher, write) pair is one latency.
func (b *Bench) fanout(ctx context.Context, size int) error {
	return b.eachRound(ctx, opWatchFanout, size, func(r int, c *Client) (round, error) {
		res := round{bytes: math.NaN()}
		if c.Format.Name != clientFormat(c.Target.Name) {
			return res, errSkip
		}
		page, err := c.list(ctx, 0, metav1.ListOptions{Limit: 1})
		if err != nil {
			return res, err
		}
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var (
			mu        sync.Mutex
			sent      = map[string]time.Time{}
			latencies []time.Duration
			seen      int
			watchers  sync.WaitGroup
		)
		want := b.cfg.FanoutWrites
		var opened []watch.Interface
		defer func() {
			for _, w := range opened {
				w.Stop()
			}
		}()
		for i := range b.cfg.Watchers {
			w, err := c.watchOn(wctx, i, page.ResourceVersion)
			if err != nil {
				return res, fmt.Errorf("opening watch %d of %d: %w", i+1, b.cfg.Watchers, err)
			}
			opened = append(opened, w)
			watchers.Add(1)
			go func() {
				defer watchers.Done()
				got := 0
				for ev := range w.ResultChan() {
					value, ok := modifiedAnnotation(ev, fanoutKey)
					if !ok {
						continue
					}
					now := time.Now()
					mu.Lock()
					if at, ok := sent[value]; ok {
						latencies = append(latencies, now.Sub(at))
						seen++
						got++
					}
					mu.Unlock()
					if got == want {
						return
					}
				}
			}()
		}
		if err := b.annotateEach(ctx, c, fanoutKey, want, fmt.Sprintf("%s-%d-%d", c.Format.Name, size, r), func(value string) {
			mu.Lock()
			sent[value] = time.Now()
			mu.Unlock()
		}); err != nil {
			return res, err
		}
		done := make(chan struct{})
		go func() { watchers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
		}
		cancel()
		mu.Lock()
		defer mu.Unlock()
		res.latencies = append(res.latencies, latencies...)
		res.ops = len(latencies)
		res.errors = want*b.cfg.Watchers - seen
		return res, nil
	})
}

// fanoutKey is the annotation each many-watchers write sets.
const fanoutKey = "bench.example.com/fanout"
