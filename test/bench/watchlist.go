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
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// StreamMemory is what the servers behind one target allocated to answer one read of the
// whole collection, as a LIST and as a watch-list (a watch that sends the current objects
// first, sendInitialEvents=true, which a server can stream without building the list).
type StreamMemory struct {
	Target         string  `json:"target"`
	Format         string  `json:"format"`
	Server         string  `json:"server"`
	Objects        int     `json:"objects"`
	ListBytes      float64 `json:"listAllocatedBytes"`
	WatchListBytes float64 `json:"watchListAllocatedBytes"`
}

// watchList reads the collection as a watch-list: every object as an ADDED event, then the
// bookmark that marks the end of the initial events. It returns the objects received.
func (c *Client) watchList(ctx context.Context) (int, error) {
	opts := metav1.ListOptions{Watch: true, SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.request(0, http.MethodGet).SpecificallyVersionedParams(&opts, scheme.ParameterCodec, schema.GroupVersion{Version: "v1"}).Watch(ctx)
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	added := 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added:
			added++
		case watch.Bookmark:
			if accessor, err := meta.Accessor(ev.Object); err == nil && accessor.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				return added, nil
			}
		case watch.Error:
			return added, fmt.Errorf("watch-list: %v", ev.Object)
		}
	}
	return added, fmt.Errorf("watch-list ended after %d objects without the end-of-initial-events bookmark", added)
}

// streamMemory measures, at the current size, the bytes each server behind a target
// allocates (go_memstats_alloc_bytes_total) for a LIST and for a watch-list of the
// whole collection, each in the format a client of that target would use. One scrape of
// /metrics with nothing else running is measured first and taken off both.
func (b *Bench) streamMemory(ctx context.Context, size int) ([]StreamMemory, error) {
	var out []StreamMemory
	for _, t := range b.targets {
		var c *Client
		for _, candidate := range b.served(t) {
			if candidate.Format.Name == clientFormat(t.Name) {
				c = candidate
			}
		}
		if c == nil {
			continue
		}
		servers := []string{t.Stores}
		if t.Name == "aggregated" {
			servers = []string{kubeAPIServer, operatorAPIServer}
		}
		for _, server := range servers {
			idle, err := b.allocatedDuring(ctx, server, func() error { return nil })
			if err != nil {
				return nil, err
			}
			list, err := b.allocatedDuring(ctx, server, func() error {
				page, err := c.list(ctx, 0, metav1.ListOptions{})
				if err == nil && page.Items != b.stored[t.Name] {
					err = fmt.Errorf("list returned %d objects, %d stored", page.Items, b.stored[t.Name])
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			watchList, err := b.allocatedDuring(ctx, server, func() error {
				n, err := c.watchList(ctx)
				if err == nil && n != b.stored[t.Name] {
					err = fmt.Errorf("watch-list sent %d objects, %d stored", n, b.stored[t.Name])
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			m := StreamMemory{Target: t.Name, Format: c.Format.Name, Server: server, Objects: b.stored[t.Name],
				ListBytes: max(0, list-idle), WatchListBytes: max(0, watchList-idle)}
			b.logf("  %s/%s in %s: a LIST allocated %.1f MiB, a watch-list %.1f MiB", t.Name, c.Format.Name, server, m.ListBytes/(1<<20), m.WatchListBytes/(1<<20))
			out = append(out, m)
		}
	}
	return out, nil
}

// allocatedDuring is the bytes server allocated while fn ran, by its
// go_memstats_alloc_bytes_total before and after (the scrapes' own allocations included).
func (b *Bench) allocatedDuring(ctx context.Context, server string, fn func() error) (float64, error) {
	before, err := b.resources.Allocated(ctx, server)
	if err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	after, err := b.resources.Allocated(ctx, server)
	if err != nil {
		return 0, err
	}
	return after - before, nil
}

// renderStreamMemory is the LIST against watch-list table.
func renderStreamMemory(b *strings.Builder, r *Result) {
	if len(r.StreamMemory) == 0 {
		return
	}
	b.WriteString("## Reading the whole collection: LIST against watch-list\n\n")
	b.WriteString("Bytes each server allocated (`go_memstats_alloc_bytes_total` before and after, less one idle scrape) to answer one LIST of every object, and one watch-list (`sendInitialEvents=true`: every object as an event, then a bookmark), at the largest size, in the format a client of each target would use:\n\n")
	b.WriteString("| target | format | server | objects | LIST MiB | watch-list MiB | watch-list against LIST |\n|---|---|---|---|---|---|---|\n")
	for _, m := range r.StreamMemory {
		ratio := "—"
		if m.ListBytes > 0 {
			ratio = fmt.Sprintf("%.2fx", m.WatchListBytes/m.ListBytes)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d | %.1f | %.1f | %s |\n", m.Target, m.Format, m.Server, m.Objects, m.ListBytes/(1<<20), m.WatchListBytes/(1<<20), ratio)
	}
	b.WriteString("\n")
}
