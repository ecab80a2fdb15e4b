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
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Resources reads the servers' CPU time and heap in use.
//
// CPU: utime+stime of each process from /proc/<pid>/stat, the same source as the
// process_cpu_seconds_total metric, read without scraping /metrics (a kube-apiserver
// scrape is megabytes and would add its own CPU to what it measures).
//
// Heap: GET /debug/pprof/heap?gc=1 runs a full garbage collection and returns the
// heap profile as of that collection; the sum of its inuse_space samples is the live
// heap, independent of garbage not yet collected.
type Resources struct {
	pids map[string]int
	heap map[string]heapSource
	// etcdDB is the stack's etcd database file: both servers' objects are in it.
	etcdDB string
}

type heapSource struct {
	url    string
	client *http.Client
}

func newResources(localDir string, heap map[string]heapSource) (*Resources, error) {
	r := &Resources{pids: map[string]int{}, heap: heap, etcdDB: filepath.Join(localDir, "etcd", "member", "snap", "db")}
	for _, name := range []string{kubeAPIServer, etcdServer, operatorAPIServer} {
		data, err := os.ReadFile(filepath.Join(localDir, "pids", name+".pid"))
		if err != nil {
			return nil, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, fmt.Errorf("pid file of %s: %w", name, err)
		}
		r.pids[name] = pid
	}
	return r, nil
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc/<pid>/stat.
const clockTicks = 100

// CPU returns the CPU seconds used so far by each server.
func (r *Resources) CPU() (map[string]float64, error) {
	out := map[string]float64{}
	for name, pid := range r.pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		// The command name in parentheses may hold spaces; fields count from after it.
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) < 13 {
			return nil, fmt.Errorf("%s: short /proc stat", name)
		}
		utime, err1 := strconv.ParseFloat(fields[11], 64)
		stime, err2 := strconv.ParseFloat(fields[12], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad /proc stat", name)
		}
		out[name] = (utime + stime) / clockTicks
	}
	return out, nil
}

// cpuDelta is after-before per server.
func cpuDelta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for name, v := range after {
		out[name] = v - before[name]
	}
	return out
}

// Heap returns the live heap of each server with a heap source, after a forced GC.
func (r *Resources) Heap(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for name, src := range r.heap {
		v, err := liveHeap(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("heap of %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

func liveHeap(ctx context.Context, src heapSource) (float64, error) {
	body, err := src.fetch(ctx, "/debug/pprof/heap?gc=1")
	if err != nil {
		return 0, err
	}
	defer body.Close()
	p, err := profile.Parse(body)
	if err != nil {
		return 0, err
	}
	return sampleSum(p, "inuse_space")
}

// sampleSum adds up one sample type of a profile.
func sampleSum(p *profile.Profile, sampleType string) (float64, error) {
	for i, st := range p.SampleType {
		if st.Type == sampleType {
			var sum int64
			for _, s := range p.Sample {
				sum += s.Value[i]
			}
			return float64(sum), nil
		}
	}
	return 0, fmt.Errorf("profile has no %s samples", sampleType)
}

// Allocated is the bytes server has allocated since it started: go_memstats_alloc_bytes_total.
func (r *Resources) Allocated(ctx context.Context, server string) (float64, error) {
	metrics, err := r.scrape(ctx, server)
	if err != nil {
		return 0, err
	}
	return metrics.sum("go_memstats_alloc_bytes_total", nil)[""], nil
}

// scrape reads a server's /metrics.
func (r *Resources) scrape(ctx context.Context, server string) (metricSnapshot, error) {
	body, err := r.heap[server].fetch(ctx, "/metrics")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", server, err)
	}
	defer body.Close()
	return parseMetrics(body)
}

// fetch GETs a path of the server and returns the body of a 200 answer.
func (src heapSource) fetch(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.url+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := src.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s answered %s", req.URL.Path, resp.Status)
	}
	return resp.Body, nil
}

// AuthzReviews is how many SubjectAccessReviews our apiserver has sent kube-apiserver so
// far: the delegated authorizer's apiserver_delegated_authz_request_total, whatever the
// answer.
func (r *Resources) AuthzReviews(ctx context.Context) (float64, error) {
	metrics, err := r.scrape(ctx, operatorAPIServer)
	if err != nil {
		return 0, err
	}
	return metrics.sum("apiserver_delegated_authz_request_total", nil)[""], nil
}

// RSS returns the resident memory of each server process (VmRSS), in bytes.
func (r *Resources) RSS() (map[string]float64, error) {
	out := map[string]float64{}
	for name, pid := range r.pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
				if err != nil {
					return nil, fmt.Errorf("%s: VmRSS %q: %w", name, rest, err)
				}
				out[name] = kib * 1024
			}
		}
	}
	return out, nil
}

// EtcdDBBytes is the size of etcd's database file.
func (r *Resources) EtcdDBBytes() (float64, error) {
	fi, err := os.Stat(r.etcdDB)
	if err != nil {
		return 0, err
	}
	return float64(fi.Size()), nil
}
