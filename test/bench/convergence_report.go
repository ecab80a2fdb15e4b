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
	"maps"
	"slices"
	"strings"
)

// Markdown is the section of docs/benchmarks.md for one convergence run.
func (run *ConvergenceRun) Markdown() string {
	head := fmt.Sprintf("## Controller convergence: %d NginxOperators\n\nMeasured by `%s`, started %s, took %s.\n\n",
		run.N, run.Command, run.Started.Format("2006-01-02 15:04 MST"), run.Duration)
	if run.Error != "" {
		head += fmt.Sprintf("The convergence run failed: %s\n\n", run.Error)
	}
	return head + run.Result.Markdown()
}

// Markdown is the body of a convergence section.
func (r *ConvergenceResult) Markdown() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d NginxOperators (replicas %d, %d namespaces of %d) created through the aggregator by %d concurrent clients while the controller runs; "+
		"converged means every one is Available and rolled out (Progressing False) at its current generation, with its Deployment and Service present. "+
		"The baseline and the controller run each have a fresh stack of their own.\n\n",
		r.N, r.Replicas, r.Namespaces, r.N/max(r.Namespaces, 1), convergenceCreateWorkers)
	b.WriteString("| measure | value |\n|---|---|\n")
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "| %s | %s |\n", name, fmt.Sprintf(format, args...))
	}
	row("created in", "%.1f s", r.CreateSeconds)
	row("converged in (from the first create)", "**%.1f s**", r.ConvergeSeconds)
	row("create rate", "%.0f/s (%s)", r.CreateRate, r.CreateRateSource)
	row("create-rate lower bound", "%.1f s = %s", r.LowerBoundSeconds, r.LowerBound)
	row("convergence / lower bound", "**%.1fx** (target ≤ 2x)", r.RatioToLowerBound)
	row("controller's own minimum (3 writes per object at the create rate)", "%.1f s (convergence %.1fx of it)", r.WriteBoundSeconds, safeRatio(r.ConvergeSeconds, r.WriteBoundSeconds))
	row("cluster baseline: the same Deployments and Services applied directly, no controller, until Available", "%.1f s (convergence **%.2fx** of it)", r.BaselineSeconds, r.RatioToBaseline)
	row("ClusterIP allocation bound (N × mean IPAddress create, allocated one at a time)", "%.1f s (convergence %.1fx of it)", r.ClusterIPBoundSeconds, safeRatio(r.ConvergeSeconds, r.ClusterIPBoundSeconds))
	row("controller writes per object while converging", "**%.2f** (%s)", r.Writes.PerObject, describeWrites(r.Writes))
	row("counted by the servers while converging", "%s", joinCounts(r.Writes.Server))
	row("servers' mean time per write while converging", "%s", joinSeconds(r.ServerSeconds))
	row(fmt.Sprintf("controller writes in %.0f s of steady state", r.SteadyStateSeconds), "**%.0f** (target 0; %s; %.0f reconciles)", r.SteadyStateWrites.Total, describeWrites(r.SteadyStateWrites), r.SteadyReconciles)
	row("reconciles while converging", "%.0f (%.2f per object)", r.Reconciles, safeRatio(r.Reconciles, float64(r.N)))
	row("controller CPU while converging", "%.1f s", r.ControllerCPUSeconds)
	row("controller heap after GC, converged", "%.1f MiB", r.ControllerHeapBytes/(1<<20))
	row("controller RSS, converged (peak)", "%.1f MiB (%.1f MiB)", r.ControllerRSSBytes/(1<<20), r.ControllerPeakRSSBytes/(1<<20))
	row("SubjectAccessReviews our apiserver sent while converging", "%.0f (%.4f per reconcile; the controller's status writes and the benchmark's creates)", r.Reviews, r.ReviewsPerReconcile)
	row("writes to kube-apiserver by every client while converging", "%.1f per object, %.0f/s (largest: %s)", r.ClusterWritesPerObject, r.ClusterWriteRate, largest(r.ClusterWrites, 5))
	b.WriteString("\n")
	fmt.Fprintf(&b, "The lower bound is the time the API takes just to accept the N creates (%s); convergence cannot finish earlier. "+
		"The cluster baseline is the tighter floor: the same Deployments and Services, built by the controller's own builders, applied "+
		"directly by as many concurrent clients before the controller starts, timed until every Deployment is Available; what convergence "+
		"takes beyond it is the controller's own share (watching, queueing, its applies and status writes). "+
		"Writes are counted twice: by the controller (nginx_operator_writes_total and client-go's rest_client_requests_total, Events included) "+
		"and by the servers (apiserver_request_total: applies of deployments and services at kube-apiserver, nginxoperators/status at our apiserver). "+
		"Every NginxOperator also costs kube-controller-manager, the scheduler and kwok about %.0f writes of their own (ReplicaSet, Pod, binding, "+
		"status updates, EndpointSlice, Events), all on the same two cores. What holds convergence back most is kube-apiserver's "+
		"Service create: it allocates dynamic ClusterIPs one at a time (its ClusterIP MetaAllocator holds a mutex while it creates the "+
		"IPAddress object through its loopback client), so Service applies queue behind each other (%.0f ms mean here, against %.0f ms for a "+
		"Deployment apply) however many the controller sends in parallel.\n",
		r.LowerBound, max(r.ClusterWritesPerObject-r.Writes.PerObject, 0), r.ServerSeconds["APPLY services"]*1000, r.ServerSeconds["APPLY deployments"]*1000)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n- %s", n)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func describeWrites(w ConvergenceWrites) string {
	parts := []string{}
	if len(w.ByKind) > 0 {
		parts = append(parts, "reconciler: "+joinCounts(w.ByKind))
	}
	if len(w.Failed) > 0 {
		parts = append(parts, "failed: "+joinCounts(w.Failed))
	}
	parts = append(parts, "all requests by method: "+joinCounts(w.ClientByMethod))
	return strings.Join(parts, "; ")
}

// joinCounts prints "a 1, b 2" in key order, or "none".
func joinCounts(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// joinSeconds prints "a 12 ms, b 3 ms" in key order, or "none".
func joinSeconds(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.0f ms", k, m[k]*1000))
	}
	return strings.Join(parts, ", ")
}

// largest prints the n largest counts, largest first.
func largest(m map[string]float64, n int) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := []string{}
	for _, k := range keys[:min(n, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", strings.TrimSpace(k), m[k]))
	}
	return strings.Join(parts, ", ")
}

func safeRatio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
