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
	"fmt"
	"math"
)

// goalSize is the measured size closest to want: the goals speak of 5k objects,
// a shortened run judges them at the nearest size it has.
func goalSize(sizes []int, want int) int {
	best := sizes[0]
	for _, s := range sizes {
		if math.Abs(float64(s-want)) < math.Abs(float64(best-want)) {
			best = s
		}
	}
	return best
}

// best returns the target's result with the best value of pick over its formats
// (lowest when lower is better), or nil when nothing was measured.
func best(r *Result, op string, size int, target string, pick func(*OpResult) float64, lowerIsBetter bool) *OpResult {
	var found *OpResult
	for i := range r.Ops {
		o := &r.Ops[i]
		if o.Op != op || o.Size != size || o.Target != target || math.IsNaN(pick(o)) {
			continue
		}
		if found == nil || (lowerIsBetter && pick(o) < pick(found)) || (!lowerIsBetter && pick(o) > pick(found)) {
			found = o
		}
	}
	return found
}

// cpuText is the CPU per operation spent in each server, and their sum.
func cpuText(o *OpResult) string {
	k, e, n := o.CPUms[kubeAPIServer], o.CPUms[etcdServer], o.CPUms[operatorAPIServer]
	return fmt.Sprintf("%.2f ms (kube-apiserver %.2f + etcd %.2f + our apiserver %.2f)", k+e+n, k, e, n)
}

func p50(o *OpResult) float64 { return o.P50.Median }
func p99(o *OpResult) float64 { return o.P99.Median }
func rate(o *OpResult) float64 {
	if o.Rate == nil {
		return math.NaN()
	}
	return o.Rate.Median
}

// bestRate is the target's highest median rate over its formats, 0 when not measured.
func bestRate(r *Result, op string, size int, target string) float64 {
	if o := best(r, op, size, target, rate, false); o != nil {
		return rate(o)
	}
	return 0
}

// evaluateGoals judges the goals. The CRD is always represented by its best
// served format (JSON, or CBOR when that is faster), so a goal is never met against a
// handicapped baseline.
func evaluateGoals(r *Result) []Goal {
	if len(r.Ops) == 0 {
		return controllerGoals(r)
	}
	size := goalSize(r.Settings.Sizes, 10000)
	goals := apiGoals(r, size, "")
	goals = append(goals, getGoals(r, size, "")...)
	goals = append(goals, heapGoal(r), plainListGoal(r), curveGoal(r))
	if v := r.smallView(); v != nil {
		prefix := "Small objects: "
		goals = append(goals, apiGoals(v, v.Settings.Sizes[0], prefix)...)
		goals = append(goals, getGoals(v, v.Settings.Sizes[0], prefix)...)
	}
	return append(goals, controllerGoals(r)...)
}

// apiGoals judges list, create and watch at one size against the CRD.
func apiGoals(r *Result, size int, prefix string) []Goal {
	var goals []Goal
	crdList := best(r, opList, size, "crd", p50, true)
	for _, g := range []struct {
		target string
		want   float64
	}{{"aggregated", 3}, {"direct", 4}} {
		goal := Goal{Name: fmt.Sprintf("%sLIST of %d objects, %s, protobuf: faster than the CRD", prefix, size, g.target), Want: fmt.Sprintf("≥ %.0fx", g.want)}
		ours := r.find(opList, size, g.target, "protobuf")
		switch {
		case crdList == nil:
			goal.Why = "the CRD's list was not measured"
		case ours == nil:
			goal.Why = fmt.Sprintf("protobuf is not served by %s (%s)", g.target, r.formatStatus(g.target, "protobuf"))
			if json := r.find(opList, size, g.target, "json"); json != nil {
				goal.Why += fmt.Sprintf("; with JSON it is %.2fx the CRD's speed (p50 %.1f ms against %.1f ms, CRD %s)", crdList.P50.Median/json.P50.Median, json.P50.Median, crdList.P50.Median, crdList.Format)
			}
		default:
			goal = judge(goal, crdList.P50.Median/ours.P50.Median, g.want, true,
				fmt.Sprintf("p50 %.1f ms against the CRD's %.1f ms (%s)", ours.P50.Median, crdList.P50.Median, crdList.Format))
		}
		goals = append(goals, goal)
	}

	create := Goal{Name: fmt.Sprintf("%sCreate throughput through the aggregator, growing to %d objects: against the CRD's", prefix, size), Want: "≥ 1x"}
	aggCreate, crdCreate := best(r, opCreate, size, "aggregated", rate, false), best(r, opCreate, size, "crd", rate, false)
	if aggCreate == nil || crdCreate == nil {
		create.Why = "create rates were not measured"
	} else {
		create = judge(create, rate(aggCreate)/rate(crdCreate), 1, true,
			fmt.Sprintf("%.0f/s (%s) against the CRD's %.0f/s (%s), %d concurrent clients", rate(aggCreate), aggCreate.Format, rate(crdCreate), crdCreate.Format, r.Settings.Clients))
		// Both servers share this machine's cores, so the CPU a create costs in all of them
		// bounds the rate: the aggregated path pays kube-apiserver's proxying on top of ours.
		create.Why = fmt.Sprintf("CPU per create: aggregated %s, CRD %s", cpuText(aggCreate), cpuText(crdCreate))
	}
	goals = append(goals, create)

	crdWatch := best(r, opWatch, size, "crd", p99, true)
	for _, target := range []string{"aggregated", "direct"} {
		goal := Goal{Name: fmt.Sprintf("%sWatch delivery p99 at %d objects, %s: against the CRD's", prefix, size, target), Want: "≤ 1x"}
		ours := best(r, opWatch, size, target, p99, true)
		if ours == nil || crdWatch == nil {
			goal.Why = "watch latency was not measured"
		} else {
			goal = judge(goal, ours.P99.Median/crdWatch.P99.Median, 1, false,
				fmt.Sprintf("%.1f ms (%s) against %.1f ms (%s)", ours.P99.Median, ours.Format, crdWatch.P99.Median, crdWatch.Format))
			if direct := best(r, opWatch, size, "direct", p99, true); target == "aggregated" && direct != nil {
				// Through the aggregator both the write and the event stream cross
				// kube-apiserver's proxy; the direct path shows what our server alone takes.
				if hop := ours.P99.Median - direct.P99.Median; hop > 0 {
					goal.Why = fmt.Sprintf("p99 %.1f ms directly, so kube-apiserver's proxy hop on the write and on the event stream adds %.1f ms", direct.P99.Median, hop)
				} else {
					goal.Why = fmt.Sprintf("p99 %.1f ms directly: the proxy hop is within this run's noise", direct.P99.Median)
				}
			}
		}
		goals = append(goals, goal)
	}
	return goals
}

// heapGoal judges our apiserver's heap per stored object against kube-apiserver's per
// custom resource at the largest size.
func heapGoal(r *Result) Goal {
	largest := r.Settings.Sizes[len(r.Settings.Sizes)-1]
	heap := Goal{Name: fmt.Sprintf("Heap per stored object at %d objects: our apiserver against kube-apiserver per custom resource", largest), Want: "≤ 0.33x"}
	ours, kube := r.memory(largest, operatorAPIServer), r.memory(largest, kubeAPIServer)
	if ours == nil || kube == nil || kube.PerObject <= 0 {
		heap.Why = "heap growth was not measured"
	} else {
		heap = judge(heap, ours.PerObject/kube.PerObject, 1.0/3, false,
			fmt.Sprintf("%.1f KiB against %.1f KiB per object", ours.PerObject/1024, kube.PerObject/1024))
		if !heap.Met {
			heap.Why = heapWhy(r.HeapBreakdown, kube.PerObject/3/1024)
		}
	}
	return heap
}

// heapWhy explains a missed heap goal with the heap profiles: the decoded objects
// against kube-apiserver's, and what the watch cache's own machinery (the same code in
// both servers) costs per object.
func heapWhy(parts []HeapPart, allowedKiB float64) string {
	perObject := map[string]map[string]float64{}
	for _, p := range parts {
		if perObject[p.Server] == nil {
			perObject[p.Server] = map[string]float64{}
		}
		if p.Objects > 0 {
			perObject[p.Server][p.Category] = p.Bytes / float64(p.Objects) / 1024
		}
	}
	ours, kube := perObject[operatorAPIServer], perObject[kubeAPIServer]
	objects := heapCategories[2].name
	if ours == nil || kube == nil || kube[objects] <= 0 {
		return "no heap profiles to say where it is (-profile)"
	}
	var machinery, kubeMachinery float64
	for _, c := range []int{0, 1, 3} {
		machinery += ours[heapCategories[c].name]
		kubeMachinery += kube[heapCategories[c].name]
	}
	return fmt.Sprintf("by the heap profiles, the decoded objects themselves take %.2f KiB each against kube-apiserver's %.2f KiB (%.2fx); "+
		"the watch cache's own index, snapshots, selector sets and event history, the same code in both servers, take %.2f KiB per object in ours and %.2f KiB in kube-apiserver's, "+
		"so of the %.2f KiB per object the goal allows, %.2f KiB would be left for the object",
		ours[objects], kube[objects], ours[objects]/kube[objects], machinery, kubeMachinery, allowedKiB, max(0, allowedKiB-machinery))
}

// judge fills in a measured goal: value against want, higher or lower being better.
func judge(g Goal, value, want float64, higherIsBetter bool, detail string) Goal {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		g.Why = "not measurable: " + detail
		return g
	}
	g.Known, g.Value = true, value
	g.Measured = fmt.Sprintf("%.2fx: %s", value, detail)
	if higherIsBetter {
		g.Met = value >= want
	} else {
		g.Met = value <= want
	}
	return g
}

func (r *Result) memory(size int, server string) *MemoryPoint {
	for i := range r.Memory {
		if r.Memory[i].Size == size && r.Memory[i].Server == server {
			return &r.Memory[i]
		}
	}
	return nil
}

func (r *Result) formatStatus(target, format string) string {
	for _, t := range r.Targets {
		if t.Name == target {
			if s, ok := t.Formats[format]; ok {
				return s
			}
		}
	}
	return "not measured"
}

// controllerGoals judges each convergence run: time to converge against the lower
// bound N / create rate as an earlier goal words it, against the cluster's own baseline
// for the same children (the floor the controller can actually reach; within 1.3x at
// 10000 objects and more, 2x below), and writes during the steady state afterwards.
func controllerGoals(r *Result) []Goal {
	if len(r.Convergence) == 0 {
		return []Goal{{Name: "Controller convergence", Want: "measured", Why: "no convergence run in this report (-convergence=false)"}}
	}
	var goals []Goal
	for _, run := range r.Convergence {
		goals = append(goals, runGoals(run)...)
	}
	return goals
}

// atScale is the size from which the convergence goal is the tighter one.
const atScale = 10000

func runGoals(run *ConvergenceRun) []Goal {
	within := 2.0
	if run.N >= atScale {
		within = 1.3
	}
	converge := Goal{Name: fmt.Sprintf("Controller: %d objects converge within 2x of the create-rate lower bound", run.N), Want: "≤ 2x"}
	baseline := Goal{Name: fmt.Sprintf("Controller: %d objects converge within %gx of the cluster's own time for the same Deployments and Services applied directly", run.N, within),
		Want: fmt.Sprintf("≤ %gx", within)}
	steady := Goal{Name: fmt.Sprintf("Controller: writes during the steady state after %d objects converged", run.N), Want: "0"}
	c := run.Result
	if c == nil || run.Error != "" {
		converge.Why = "the convergence run failed: " + run.Error
		baseline.Why, steady.Why = converge.Why, converge.Why
		return []Goal{converge, baseline, steady}
	}
	if c.LowerBoundSeconds > 0 {
		converge = judge(converge, c.RatioToLowerBound, 2, false,
			fmt.Sprintf("converged in %.1f s against a lower bound of %.1f s (%s)", c.ConvergeSeconds, c.LowerBoundSeconds, c.LowerBound))
		if !converge.Met && c.BaselineSeconds > 0 {
			converge.Why = fmt.Sprintf("the cluster alone needs %.1f s to run the same %d Deployments and Services applied directly "+
				"without any controller (%.0fx the bound): Service creates queue on kube-apiserver's one-at-a-time ClusterIP allocation, "+
				"and kube-controller-manager, the scheduler and kwok make ~%.0f writes per object of their own on the same 2 cores",
				c.BaselineSeconds, c.N, c.BaselineSeconds/c.LowerBoundSeconds, max(c.ClusterWritesPerObject-c.Writes.PerObject, 0))
		}
	} else {
		converge.Why = "no create rate to bound it: " + c.LowerBound
	}
	if c.BaselineSeconds > 0 {
		baseline = judge(baseline, c.RatioToBaseline, within, false,
			fmt.Sprintf("converged in %.1f s against %.1f s for the cluster alone", c.ConvergeSeconds, c.BaselineSeconds))
	} else {
		baseline.Why = "the baseline was not measured"
	}
	steady.Known, steady.Value, steady.Met = true, c.SteadyStateWrites.Total, c.SteadyStateWrites.Total == 0
	steady.Measured = fmt.Sprintf("%.0f writes in %.0f s", c.SteadyStateWrites.Total, c.SteadyStateSeconds)
	return []Goal{converge, baseline, steady}
}

// cpuSum is the CPU per operation of all three processes.
func cpuSum(o *OpResult) float64 {
	return o.CPUms[kubeAPIServer] + o.CPUms[etcdServer] + o.CPUms[operatorAPIServer]
}

// getGoals judges GET through the aggregator against the CRD's: latency, CPU across
// every process, and the SubjectAccessReviews our apiserver needed for them.
func getGoals(r *Result, size int, prefix string) []Goal {
	latency := Goal{Name: fmt.Sprintf("%sGET through the aggregator at %d objects: p50 against the CRD's", prefix, size), Want: "≥ 1x"}
	cpu := Goal{Name: fmt.Sprintf("%sCPU per GET across all processes at %d objects: aggregated against the CRD's", prefix, size), Want: "≤ 1x"}
	agg, crd := best(r, opGet, size, "aggregated", p50, true), best(r, opGet, size, "crd", p50, true)
	direct := best(r, opGet, size, "direct", p50, true)
	if agg == nil || crd == nil {
		latency.Why = "GETs were not measured"
		cpu.Why = latency.Why
		return []Goal{latency, cpu}
	}
	latency = judge(latency, crd.P50.Median/agg.P50.Median, 1, true,
		fmt.Sprintf("p50 %.1f ms (%s) against the CRD's %.1f ms (%s)", agg.P50.Median, agg.Format, crd.P50.Median, crd.Format))
	cpu = judge(cpu, cpuSum(agg)/cpuSum(crd), 1, false, fmt.Sprintf("aggregated %s, CRD %s", cpuText(agg), cpuText(crd)))
	if !latency.Met {
		// On a machine whose cores are all busy, latency follows the CPU a request costs.
		// Through the aggregator kube-apiserver runs its whole filter chain and then
		// proxies; our apiserver runs a filter chain of its own before it reads.
		latency.Why = fmt.Sprintf("the aggregated GET runs two apiservers' filter chains: kube-apiserver spends %.2f ms per GET to authenticate, authorize and proxy it, against %.2f ms to serve the CRD's GET whole",
			agg.CPUms[kubeAPIServer], crd.CPUms[kubeAPIServer])
		if direct != nil {
			latency.Why += fmt.Sprintf("; called directly, our apiserver answers in %.1f ms (%s), %.2fx the CRD's", direct.P50.Median, direct.Format, crd.P50.Median/direct.P50.Median)
		}
	}
	goals := []Goal{latency, cpu}
	if prefix == "" {
		goals = append(goals, reviewGoal(r, size))
	}
	return goals
}

// reviewGoal is the SubjectAccessReviews our apiserver sent per GET it served.
func reviewGoal(r *Result, size int) Goal {
	g := Goal{Name: fmt.Sprintf("SubjectAccessReviews per GET served by our apiserver at %d objects (benchmark user authorized by RBAC)", size), Want: "≤ 0.01"}
	for _, p := range r.AuthzReviews {
		if p.Size == size && p.Requests > 0 {
			perRequest := p.Reviews / float64(p.Requests)
			g.Known, g.Value, g.Met = true, perRequest, perRequest <= 0.01
			g.Measured = fmt.Sprintf("%.4f: %.0f reviews for %d GETs of random names", perRequest, p.Reviews, p.Requests)
			return g
		}
	}
	g.Why = "not counted"
	return g
}

// plainListGoal judges what a list without gzip costs our apiserver against the same
// list with it, directly at the largest size, in the format that lists fastest without
// gzip. Without gzip the server's own writes reach the connection as the server cuts
// them; with it, gzip's buffer gathers them. The latencies of both, and the CRD's, say
// how much of the difference is the bytes themselves (the client receives several times
// more).
func plainListGoal(r *Result) Goal {
	largest := r.Settings.Sizes[len(r.Settings.Sizes)-1]
	g := Goal{Name: fmt.Sprintf("LIST of %d objects without gzip, direct: our apiserver's CPU per list against the same list with gzip", largest), Want: "≤ 1.1x"}
	plain := best(r, opListPlain, largest, "direct", p50, true)
	if plain == nil {
		g.Why = "not measured"
		return g
	}
	gzipped := r.find(opList, largest, "direct", plain.Format)
	if gzipped == nil || gzipped.CPUms[operatorAPIServer] <= 0 {
		g.Why = "not measured"
		return g
	}
	g = judge(g, plain.CPUms[operatorAPIServer]/gzipped.CPUms[operatorAPIServer], 1.1, false,
		fmt.Sprintf("%.1f ms against %.1f ms (%s)", plain.CPUms[operatorAPIServer], gzipped.CPUms[operatorAPIServer], plain.Format))
	g.Why = fmt.Sprintf("p50 %.1f ms without gzip against %.1f ms with it (%.2fx)", plain.P50.Median, gzipped.P50.Median, plain.P50.Median/gzipped.P50.Median)
	crdPlain := best(r, opListPlain, largest, "crd", p50, true)
	if crdPlain != nil {
		if crdGzipped := r.find(opList, largest, "crd", crdPlain.Format); crdGzipped != nil {
			g.Why += fmt.Sprintf("; the CRD's list in %s: %.1f ms against %.1f ms (%.2fx)", crdPlain.Format, crdPlain.P50.Median, crdGzipped.P50.Median, crdPlain.P50.Median/crdGzipped.P50.Median)
		}
	}
	return g
}

// curveGoal judges the scale curve: at every size, through the aggregator, our create
// rate, LIST p50 (protobuf against the CRD's best format), paginated LIST and delivery to
// many watchers p99 against the CRD's. The value is the worst of these ratios (higher is
// better).
func curveGoal(r *Result) Goal {
	g := Goal{Name: fmt.Sprintf("Scale curve %v: ahead of the CRD at every size through the aggregator (create rate, LIST p50, paginated LIST p50, delivery to many watchers p99)", r.Settings.Sizes), Want: "≥ 1x"}
	worst, what := math.Inf(1), ""
	for _, size := range r.Settings.Sizes {
		for _, c := range []struct {
			op            string
			pick          func(*OpResult) float64
			lowerIsBetter bool
		}{{opCreate, rate, false}, {opList, p50, true}, {opPaginate, p50, true}, {opWatchFanout, p99, true}} {
			ours, crd := best(r, c.op, size, "aggregated", c.pick, c.lowerIsBetter), best(r, c.op, size, "crd", c.pick, c.lowerIsBetter)
			if ours == nil || crd == nil {
				continue
			}
			ratio := c.pick(ours) / c.pick(crd)
			if c.lowerIsBetter {
				ratio = c.pick(crd) / c.pick(ours)
			}
			if ratio < worst {
				worst, what = ratio, fmt.Sprintf("%s at %d objects", c.op, size)
			}
		}
	}
	if math.IsInf(worst, 1) {
		g.Why = "not measured"
		return g
	}
	return judge(g, worst, 1, true, "the least lead: "+what)
}
