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
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fixedResult is a run small enough to check by hand: the CRD lists in 30 ms, our API
// in 10 ms (JSON) and 8 ms or 6 ms (protobuf).
func fixedResult() *Result {
	spread := func(v float64) Spread { return Spread{Median: v, Min: v * 0.9, Max: v * 1.1, Rounds: 3} }
	rate := func(v float64) *Spread { s := spread(v); return &s }
	op := func(op, target, format string, p50ms, p99ms float64, r *Spread) OpResult {
		return OpResult{Op: op, Size: 5000, Target: target, Format: format, Count: 30, Rate: r,
			P50: spread(p50ms), P99: spread(p99ms), CPUms: map[string]float64{kubeAPIServer: 1, operatorAPIServer: 2}}
	}
	return &Result{
		Command: "make bench", Started: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC), Duration: "12m0s",
		Machine:  Machine{CPUModel: "test CPU", Cores: 2, MemoryGiB: "4.0", Kernel: "6.0", GoVersion: "go1.26", OS: "linux/amd64"},
		Versions: map[string]string{kubeAPIServer: "v1.36.3"},
		Settings: Settings{Sizes: []int{1000, 5000}, Rounds: 3, Clients: 16, PageLimit: 500, Scenarios: true},
		Targets: []TargetInfo{
			{Name: "crd", Title: "CRD", Formats: map[string]string{"json": "served", "protobuf": "not served: no client encoding"}},
			{Name: "aggregated", Title: "aggregated", Formats: map[string]string{"json": "served", "protobuf": "served"}},
			{Name: "direct", Title: "direct", Formats: map[string]string{"json": "served", "protobuf": "not served: list answered 406 Not Acceptable"}},
		},
		Ops: []OpResult{
			op(opList, "crd", "json", 30, 40, nil),
			op(opList, "aggregated", "json", 10, 12, nil),
			op(opList, "aggregated", "protobuf", 8, 9, nil),
			op(opList, "direct", "json", 6, 7, nil),
			op(opCreate, "crd", "json", 20, 50, rate(500)),
			op(opCreate, "aggregated", "json", 25, 60, rate(450)),
			op(opCreate, "aggregated", "protobuf", 22, 55, rate(520)),
			op(opWatch, "crd", "json", 3, 10, nil),
			op(opWatch, "aggregated", "json", 3, 12, nil),
			op(opWatch, "direct", "json", 2, 8, nil),
			op(opGet, "crd", "json", 4, 8, nil),
			op(opGet, "aggregated", "protobuf", 5, 9, nil),
			op(opGet, "direct", "protobuf", 2, 4, nil),
			func() OpResult {
				o := op(opListPlain, "direct", "json", 5, 6, nil)
				o.CPUms = map[string]float64{operatorAPIServer: 2.1}
				return o
			}(),
		},
		AuthzReviews: []ReviewPoint{{Size: 5000, Requests: 1800, Reviews: 3}},
		SmallObjects: &SmallObjects{Size: 5000, Ops: []OpResult{
			op(opList, "crd", "json", 12, 15, nil),
			op(opList, "aggregated", "protobuf", 5, 6, nil),
		}},
		Memory: []MemoryPoint{
			{Size: 5000, Server: kubeAPIServer, Objects: 5000, PerObject: 20000},
			{Size: 5000, Server: operatorAPIServer, Objects: 10000, PerObject: 6000},
		},
	}
}

func TestGoals(t *testing.T) {
	r := fixedResult()
	goals := evaluateGoals(r)
	byPrefix := func(prefix string) Goal {
		t.Helper()
		for _, g := range goals {
			if strings.HasPrefix(g.Name, prefix) {
				return g
			}
		}
		t.Fatalf("no goal %q in %+v", prefix, goals)
		return Goal{}
	}
	for _, tc := range []struct {
		prefix     string
		known, met bool
		value      float64
	}{
		{"LIST of 5000 objects, aggregated", true, true, 30.0 / 8}, // 3.75x ≥ 3x
		{"LIST of 5000 objects, direct", false, false, 0},          // protobuf not served
		{"Create throughput", true, true, 520.0 / 500},             // best format each
		{"Heap per stored object", true, true, 6000.0 / 20000},     // 0.30 ≤ 0.33
		{"Watch delivery p99 at 5000 objects, aggregated", true, false, 12.0 / 10},
		{"Watch delivery p99 at 5000 objects, direct", true, true, 8.0 / 10},
		{"Controller convergence", false, false, 0},
		{"GET through the aggregator at 5000", true, false, 4.0 / 5},
		{"CPU per GET across all processes at 5000", true, true, 1},
		{"SubjectAccessReviews per GET", true, true, 3.0 / 1800},
		{"LIST of 5000 objects without gzip", true, true, 2.1 / 2},
		{"Small objects: LIST of 5000 objects, aggregated", true, false, 12.0 / 5}, // 2.4x < 3x
		{"Small objects: Create throughput", false, false, 0},
		{"Scale curve", true, true, 520.0 / 500}, // create is the least lead
	} {
		g := byPrefix(tc.prefix)
		if g.Known != tc.known || g.Met != tc.met || (tc.known && !approxEqual(g.Value, tc.value)) {
			t.Errorf("%s: known %v met %v value %v, want %v %v %v (%s%s)", tc.prefix, g.Known, g.Met, g.Value, tc.known, tc.met, tc.value, g.Measured, g.Why)
		}
	}
	if g := byPrefix("GET through the aggregator"); !strings.Contains(g.Why, "two apiservers' filter chains") || !strings.Contains(g.Why, "2.0 ms (protobuf), 2.00x") {
		t.Errorf("a missed GET goal explains itself with the CPU of each apiserver and the direct figure: %q", g.Why)
	}
	if g := byPrefix("LIST of 5000 objects, direct"); !strings.Contains(g.Why, "406") || !strings.Contains(g.Why, "5.00x") {
		t.Errorf("an unmeasured goal explains itself with the JSON figure: %q", g.Why)
	}
	// A better CRD format is the baseline: CBOR listing in 10 ms makes aggregated protobuf
	// only 1.25x faster.
	r.Ops = append(r.Ops, OpResult{Op: opList, Size: 5000, Target: "crd", Format: "cbor", P50: Spread{Median: 10, Min: 10, Max: 10, Rounds: 3}})
	if g := evaluateGoals(r)[0]; g.Met || !approxEqual(g.Value, 1.25) {
		t.Errorf("against the CRD's best format: %+v", g)
	}
}

func TestListsPerRound(t *testing.T) {
	for _, tc := range []struct{ perRound, size, want int }{{4, 1000, 4}, {4, 10000, 4}, {4, 20000, 2}, {4, 50000, 1}, {4, 100000, 1}} {
		if got := listsPerRound(tc.perRound, tc.size); got != tc.want {
			t.Errorf("listsPerRound(%d, %d) = %d, want %d", tc.perRound, tc.size, got, tc.want)
		}
	}
}

func approxEqual(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestGoalSizeIsNearest(t *testing.T) {
	if got := goalSize([]int{200, 500}, 5000); got != 500 {
		t.Errorf("goalSize = %d", got)
	}
	if got := goalSize([]int{1000, 5000, 10000}, 5000); got != 5000 {
		t.Errorf("goalSize = %d", got)
	}
}

func TestRenderMarkdown(t *testing.T) {
	r := fixedResult()
	r.Goals = evaluateGoals(r)
	md := renderMarkdown(r)
	for _, want := range []string{
		"Generated by `make bench`",
		"| CPU | test CPU |",
		"| LIST of 5000 objects, aggregated, protobuf: faster than the CRD | ≥ 3x | 3.75x: p50 8.0 ms against the CRD's 30.0 ms (json) | **met** |",
		"| Watch delivery p99 at 5000 objects, aggregated: against the CRD's | ≤ 1x | 1.20x: 12.0 ms (json) against 10.0 ms (json); p99 8.0 ms directly, so kube-apiserver's proxy hop on the write and on the event stream adds 4.0 ms | missed |",
		"| direct | served | not served: list answered 406 Not Acceptable |",
		"### List all (one at a time) — 5000 objects",
		"| aggregated | protobuf | 8.0 (7.2–8.8) | 9.0 (8.1–9.9) | 3.75x | 1.00 | 0.00 | 2.00 | 30 | 0 |",
		"| aggregated | protobuf | 520 (468–572) |",
		"| 5000 | nginx-operator-apiserver | 10000 |",
		"kubernetes issue 124680",
		"Not run (-convergence=false)",
		"## Small objects: 5000 per target",
		"| aggregated | protobuf | 5.0 (4.5–5.5) | 6.0 (5.4–6.6) | 2.40x |",
		"| SubjectAccessReviews per GET served by our apiserver at 5000 objects (benchmark user authorized by RBAC) | ≤ 0.01 | 0.0017: 3 reviews for 1800 GETs of random names | **met** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "NaN") {
		t.Error("report shows NaN")
	}
	// Rows come CRD first, then JSON before protobuf.
	if i, j := strings.Index(md, "| crd | json | 30.0"), strings.Index(md, "| aggregated | json | 10.0"); i < 0 || j < i {
		t.Errorf("row order: crd at %d, aggregated at %d", i, j)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("the result does not marshal: %v", err)
	}
}

func TestControllerGoalsJudgeBothFloors(t *testing.T) {
	r := fixedResult()
	run := &ConvergenceRun{N: 1000, Result: &ConvergenceResult{N: 1000, ConvergeSeconds: 80, LowerBoundSeconds: 2, RatioToLowerBound: 40, LowerBound: "N / create rate",
		BaselineSeconds: 50, RatioToBaseline: 1.6, ClusterWritesPerObject: 22, Writes: ConvergenceWrites{PerObject: 6}, SteadyStateSeconds: 60}}
	r.Convergence = []*ConvergenceRun{run}
	goals := controllerGoals(r)
	if len(goals) != 3 {
		t.Fatalf("want the create-rate, baseline and steady-state goals, got %+v", goals)
	}
	if g := goals[0]; !g.Known || g.Met || !strings.Contains(g.Why, "50.0 s") {
		t.Errorf("create-rate goal: missed, explained by the baseline: %+v", g)
	}
	if g := goals[1]; !g.Known || !g.Met || !approxEqual(g.Value, 1.6) || g.Want != "≤ 2x" {
		t.Errorf("baseline goal below 10000 objects: met at 1.6x against 2x: %+v", g)
	}
	if g := goals[2]; !g.Known || !g.Met {
		t.Errorf("steady state with 0 writes: %+v", g)
	}
	run.Result.RatioToBaseline = 2.5
	if g := controllerGoals(r)[1]; g.Met {
		t.Errorf("2.5x the baseline must be missed: %+v", g)
	}

	// At 10000 objects the goal is 1.3x.
	run.N, run.Result.N = 10000, 10000
	for _, c := range []struct {
		ratio float64
		met   bool
	}{{1.25, true}, {1.35, false}} {
		run.Result.RatioToBaseline = c.ratio
		if g := controllerGoals(r)[1]; !g.Known || g.Met != c.met || g.Want != "≤ 1.3x" {
			t.Errorf("10000 objects at %.2fx: met %v, want %v: %+v", c.ratio, g.Met, c.met, g)
		}
	}
	run.Error, run.Result = "stack did not start", nil
	if g := controllerGoals(r)[1]; g.Known || !strings.Contains(g.Why, "stack did not start") {
		t.Errorf("a failed run is explained, not judged: %+v", g)
	}
}

func TestMergeKeepsWhatThisRunDidNotMeasure(t *testing.T) {
	prev := fixedResult()
	prev.Convergence = []*ConvergenceRun{{N: 100, Command: "a quick make bench"}, {N: 1000, Command: "make bench"}, {N: 10000, Command: "make bench-controller (old)"}}
	prev.Versions = map[string]string{"kube-apiserver": "v1.36.3"}

	// make bench-controller: only a 10000 run; the API scenarios and the 1000 run stay.
	onlyConvergence := &Result{Settings: Settings{Scenarios: false}, Versions: map[string]string{"go (benchmark client)": "go1.26"},
		Convergence: []*ConvergenceRun{{N: 10000, Command: "make bench-controller"}}}
	got := mergeResults(prev, onlyConvergence)
	if len(got.Ops) != len(prev.Ops) || len(got.Ops) == 0 {
		t.Errorf("the API scenarios were not kept: %d operations, want %d", len(got.Ops), len(prev.Ops))
	}
	if len(got.Convergence) != 3 || got.Convergence[1].Command != "make bench" || got.Convergence[2].Command != "make bench-controller" {
		t.Errorf("runs: want the kept 100 and 1000 and the new 10000, got %d runs", len(got.Convergence))
	}
	if got.Versions["kube-apiserver"] == "" || got.Versions["go (benchmark client)"] == "" {
		t.Errorf("versions of both runs should be kept: %v", got.Versions)
	}

	// make bench: new API scenarios and a 1000 run; the 10000 run stays, the quick 100 goes.
	full := fixedResult()
	full.Convergence = []*ConvergenceRun{{N: 1000, Command: "make bench (new)"}}
	got = mergeResults(prev, full)
	if got != full || len(got.Convergence) != 2 || got.Convergence[0].Command != "make bench (new)" || got.Convergence[1].N != 10000 {
		t.Errorf("make bench should keep its own results and add the 10000 run: %+v", got.Convergence)
	}
}
