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

import "time"

// Result is everything one run measured; docs/benchmarks.json is this struct and
// docs/benchmarks.md renders it.
type Result struct {
	Command  string            `json:"command"`
	Started  time.Time         `json:"started"`
	Duration string            `json:"duration"`
	Machine  Machine           `json:"machine"`
	Versions map[string]string `json:"versions"`
	Settings Settings          `json:"settings"`
	Targets  []TargetInfo      `json:"targets"`
	// Ops holds every measured (operation, size, target, format).
	Ops []OpResult `json:"operations"`
	// Memory is heap in use per server after a forced GC, at each size.
	Memory []MemoryPoint `json:"memory"`
	// StreamMemory compares a LIST with a watch-list at the largest size.
	StreamMemory []StreamMemory `json:"streamMemory,omitempty"`
	// Etcd is the etcd database's size at each size.
	Etcd []EtcdPoint `json:"etcd,omitempty"`
	// HeapBreakdown is each server's heap at the largest size by what holds it.
	HeapBreakdown []HeapPart `json:"heapBreakdown,omitempty"`
	// AuthzReviews are the SubjectAccessReviews of each GET phase.
	AuthzReviews []ReviewPoint `json:"authzReviews,omitempty"`
	// SmallObjects is the pass with small objects, when it ran.
	SmallObjects *SmallObjects    `json:"smallObjects,omitempty"`
	Goals        []Goal           `json:"goals"`
	Profiles     []ProfileSummary `json:"profiles,omitempty"`
	// Convergence holds the controller convergence runs, one per size: make bench
	// measures 1000 NginxOperators after the API scenarios, make bench-controller 10000
	// alone (it takes longer than make bench may). Each keeps the other's parts of the
	// report it replaces.
	Convergence []*ConvergenceRun `json:"convergenceRuns,omitempty"`
	// Revisions is the cost of NginxOperatorRevisions, when measured (-revisions).
	Revisions *RevisionsRun `json:"revisions,omitempty"`
	Notes     []string      `json:"notes,omitempty"`
}

// ConvergenceRun is one convergence measurement and the command that made it.
type ConvergenceRun struct {
	N            int                `json:"n"`
	PerNamespace int                `json:"perNamespace"`
	Command      string             `json:"command"`
	Started      time.Time          `json:"started"`
	Duration     string             `json:"duration"`
	Result       *ConvergenceResult `json:"result,omitempty"`
	Error        string             `json:"error,omitempty"`
}

// ReviewPoint is the SubjectAccessReviews our apiserver sent kube-apiserver while the
// GET phase of one size sent it Requests GETs (aggregated and direct, every format).
type ReviewPoint struct {
	Size     int     `json:"size"`
	Requests int     `json:"requests"`
	Reviews  float64 `json:"subjectAccessReviews"`
}

// SmallObjects holds every operation measured once more, at one size, with objects of
// only an image, a replica count and one port.
type SmallObjects struct {
	Size int        `json:"size"`
	Ops  []OpResult `json:"operations"`
}

// smallView is r with the small-object pass's results in place of the rich ones, so
// that the same tables and goals apply to it.
func (r *Result) smallView() *Result {
	if r.SmallObjects == nil {
		return nil
	}
	v := *r
	v.Ops = r.SmallObjects.Ops
	v.Settings.Sizes = []int{r.SmallObjects.Size}
	return &v
}

// Settings are the knobs of the run.
type Settings struct {
	Sizes         []int  `json:"sizes"`
	Rounds        int    `json:"rounds"`
	Clients       int    `json:"clients"`
	GetsPerRound  int    `json:"getsPerRound"`
	ListsPerRound int    `json:"listsPerRound"`
	UpdatesPerRnd int    `json:"updatesPerRound"`
	WatchPerRound int    `json:"watchUpdatesPerRound"`
	PageLimit     int64  `json:"pageLimit"`
	Watchers      int    `json:"watchers"`
	FanoutWrites  int    `json:"fanoutWritesPerRound"`
	CBOR          bool   `json:"cborFeatureGate"`
	CRDFile       string `json:"crdFile"`
	// Scenarios is false when this command measured only a convergence run.
	Scenarios bool `json:"scenarios"`
}

// TargetInfo records which formats each target served.
type TargetInfo struct {
	Name    string            `json:"name"`
	Title   string            `json:"title"`
	Path    string            `json:"path"`
	Formats map[string]string `json:"formats"` // format -> "served" or why not
}

// Operations measured.
const (
	opCreate = "create"
	opGet    = "get"
	opList   = "list"
	// opListPlain is opList by a client that does not ask for gzip.
	opListPlain = "list-no-gzip"
	opPaginate  = "paginated-list"
	opUpdate    = "update"
	opWatch     = "watch"
	// opWatchFanout is watch delivery to many watchers at once.
	opWatchFanout = "watch-fanout"
	opDelete      = "delete"
)

// OpResult is one operation at one size against one target in one format. Every
// figure is the median over rounds with its min and max.
type OpResult struct {
	Op     string `json:"op"`
	Size   int    `json:"size"`
	Target string `json:"target"`
	Format string `json:"format"`
	// Count is the number of operations measured over all rounds.
	Count int `json:"count"`
	// Rate is operations per second (create, delete; paginated list: objects/s).
	Rate *Spread `json:"ratePerSecond,omitempty"`
	P50  Spread  `json:"p50ms"`
	P99  Spread  `json:"p99ms"`
	// Bytes is the response body length of one list (all pages for a paginated list).
	Bytes *Spread `json:"bytes,omitempty"`
	// Pages of one paginated list.
	Pages int `json:"pages,omitempty"`
	// CPUms is CPU time per operation, in milliseconds, of each server process.
	CPUms map[string]float64 `json:"cpuMsPerOp,omitempty"`
	// Errors counts failed operations (and, for watch, events never seen).
	Errors int `json:"errors"`
}

// MemoryPoint is the heap in use of one server after a forced GC with a number of
// benchmark objects stored, and the increase per object over the empty baseline.
type MemoryPoint struct {
	Size          int     `json:"size"`
	Server        string  `json:"server"`
	Objects       int     `json:"objects"`
	HeapBytes     float64 `json:"heapInuseBytes"`
	BaselineBytes float64 `json:"baselineBytes"`
	PerObject     float64 `json:"bytesPerObject"`
	// RSSBytes is the process's resident memory at the same moment.
	RSSBytes float64 `json:"rssBytes"`
}

// EtcdPoint is the etcd database file's size with every target at one size (all three
// targets' objects share the stack's etcd).
type EtcdPoint struct {
	Size      int     `json:"size"`
	FileBytes float64 `json:"fileBytes"`
}

// Goal is one target of the benchmark with the measured value.
type Goal struct {
	Name     string  `json:"name"`
	Want     string  `json:"want"`
	Measured string  `json:"measured"`
	Value    float64 `json:"value"`
	Met      bool    `json:"met"`
	// Known is false when the run could not measure it (format not served, helper missing).
	Known bool   `json:"known"`
	Why   string `json:"why,omitempty"`
}

// ProfileSummary lists the heaviest functions of our own code in a profile of our
// apiserver: a CPU profile of a phase, or the live heap after a forced GC.
type ProfileSummary struct {
	Phase string `json:"phase"`
	Kind  string `json:"kind"` // cpu or heap
	File  string `json:"file"`
	// Total is the profile's CPU seconds, or MiB of live heap.
	Total float64       `json:"total"`
	Top   []ProfileLine `json:"top"`
	// Flat are the functions of any code with the largest flat share: where the
	// CPU or the bytes actually are, library code included.
	Flat []ProfileLine `json:"flat"`
}

// ProfileLine is one function's cumulative share of a profile.
type ProfileLine struct {
	Function string  `json:"function"`
	Flat     float64 `json:"flatPercent"`
	Cum      float64 `json:"cumPercent"`
}

// find returns the result for a key, nil when not measured.
func (r *Result) find(op string, size int, target, format string) *OpResult {
	for i := range r.Ops {
		o := &r.Ops[i]
		if o.Op == op && o.Size == size && o.Target == target && o.Format == format {
			return o
		}
	}
	return nil
}
