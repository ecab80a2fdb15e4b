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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
)

// saveAndSummarise writes a profile to file and summarises it, its total divided by
// unit (nanoseconds to seconds, bytes to MiB).
func saveAndSummarise(prof *profile.Profile, file, phase, kind string, unit float64) (*ProfileSummary, error) {
	out, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	if err := prof.Write(out); err != nil {
		return nil, err
	}
	summary := summarise(prof, 15)
	summary.Phase, summary.File, summary.Kind = phase, file, kind
	summary.Total /= unit
	return summary, nil
}

// flatTop is how many functions of any code a summary lists by flat share.
const flatTop = 8

// ourCode marks the functions of this repository in a profile.
const ourCode = "github.com/example/nginx-operator/"

// Profiler captures CPU profiles of our apiserver (the generic apiserver serves
// /debug/pprof/profile) while a phase runs: back-to-back chunks, merged when the phase
// ends, so the profile covers the phase whatever its length.
type Profiler struct {
	dir    string
	source heapSource // the same URL and client as the heap reads
	kube   heapSource // kube-apiserver's, for its heap profile
	chunk  int        // seconds per chunk
	logf   func(format string, args ...any)
}

// Start begins profiling a phase; the returned function ends it, writes
// <dir>/apiserver-<phase>.pb.gz and summarises it.
func (p *Profiler) Start(ctx context.Context, phase string) func() (*ProfileSummary, error) {
	var (
		mu       sync.Mutex
		profiles []*profile.Profile
		firstErr error
		stopped  = make(chan struct{})
		finished = make(chan struct{})
	)
	go func() {
		defer close(finished)
		for {
			prof, err := p.fetch(ctx)
			mu.Lock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if prof != nil {
				profiles = append(profiles, prof)
			}
			mu.Unlock()
			select {
			case <-stopped:
				return
			default:
			}
			if err != nil || ctx.Err() != nil {
				return
			}
		}
	}()
	return func() (*ProfileSummary, error) {
		close(stopped)
		<-finished // the chunk in flight still ends; at most chunk seconds
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil {
			return nil, firstErr
		}
		merged, err := profile.Merge(profiles)
		if err != nil {
			return nil, err
		}
		summary, err := saveAndSummarise(merged, filepath.Join(p.dir, "apiserver-"+phase+".pb.gz"), phase, "cpu", 1e9) // nanoseconds to seconds
		if err != nil {
			return nil, err
		}
		p.logf("  profile of our apiserver during %s: %s (%.1f s of CPU samples)", phase, summary.File, summary.Total)
		return summary, nil
	}
}

// SaveHeap writes the live heap of our apiserver after a forced GC to
// <dir>/apiserver-heap-<phase>.pb.gz and summarises what our code retains. With a
// kube-apiserver source it saves kube-apiserver's too (kube-apiserver-heap-<phase>.pb.gz),
// and breaks both down by what the heap holds, per object each server stores.
func (p *Profiler) SaveHeap(ctx context.Context, phase string, objects map[string]int) (*ProfileSummary, []HeapPart, error) {
	prof, err := p.get(ctx, p.source, "/debug/pprof/heap?gc=1")
	if err != nil {
		return nil, nil, err
	}
	// inuse_space is a heap profile's last sample type; bytes to MiB.
	summary, err := saveAndSummarise(prof, filepath.Join(p.dir, "apiserver-heap-"+phase+".pb.gz"), phase, "heap", 1<<20)
	if err != nil {
		return nil, nil, err
	}
	p.logf("  live heap profile of our apiserver %s: %s (%.1f MiB in use)", phase, summary.File, summary.Total)
	parts, err := breakDownHeap(prof, operatorAPIServer, objects[operatorAPIServer])
	if err != nil || p.kube.url == "" {
		return summary, parts, err
	}
	kubeProf, err := p.get(ctx, p.kube, "/debug/pprof/heap?gc=1")
	if err != nil {
		return nil, nil, err
	}
	if _, err := saveAndSummarise(kubeProf, filepath.Join(p.dir, "kube-apiserver-heap-"+phase+".pb.gz"), phase, "heap", 1<<20); err != nil {
		return nil, nil, err
	}
	kubeParts, err := breakDownHeap(kubeProf, kubeAPIServer, objects[kubeAPIServer])
	return summary, append(parts, kubeParts...), err
}

func (p *Profiler) fetch(ctx context.Context) (*profile.Profile, error) {
	return p.get(ctx, p.source, fmt.Sprintf("/debug/pprof/profile?seconds=%d", p.chunk))
}

// get fetches and parses one profile from a server's path.
func (p *Profiler) get(ctx context.Context, src heapSource, path string) (*profile.Profile, error) {
	body, err := src.fetch(ctx, path)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return profile.Parse(body)
}

// summarise computes each function's flat and cumulative share of the last sample type
// (CPU time of a CPU profile, bytes in use of a heap profile) and
// keeps the functions of our own code with the largest cumulative share: what a change
// in this repository could make cheaper.
func summarise(p *profile.Profile, top int) *ProfileSummary {
	index := len(p.SampleType) - 1
	flat, cum := map[string]int64{}, map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[index]
		total += v
		seen := map[string]bool{}
		for i, loc := range s.Location {
			for j, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				name := line.Function.Name
				if i == 0 && j == 0 {
					flat[name] += v
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += v
				}
			}
		}
	}
	summary := &ProfileSummary{Total: float64(total)}
	if total == 0 {
		return summary
	}
	var names []string
	for name := range cum {
		if strings.HasPrefix(name, ourCode) {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return cum[names[i]] > cum[names[j]] })
	line := func(name string) ProfileLine {
		return ProfileLine{
			Function: strings.TrimPrefix(name, ourCode),
			Flat:     100 * float64(flat[name]) / float64(total),
			Cum:      100 * float64(cum[name]) / float64(total),
		}
	}
	for _, name := range names[:min(top, len(names))] {
		summary.Top = append(summary.Top, line(name))
	}
	all := make([]string, 0, len(flat))
	for name := range flat {
		all = append(all, name)
	}
	sort.Slice(all, func(i, j int) bool { return flat[all[i]] > flat[all[j]] })
	for _, name := range all[:min(flatTop, len(all))] {
		summary.Flat = append(summary.Flat, line(name))
	}
	return summary
}
