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
	"cmp"
	"context"
	"fmt"
	"time"
)

// ConvergenceConfig configures the controller convergence scenario.
type ConvergenceConfig struct {
	RepoRoot string // bin/controller is built there (make build)
	// Stack starts a fresh private stack without a controller and returns its LOCAL_DIR
	// (kubeconfig, nginx-operator-controller.kubeconfig) and how to stop it. The
	// baseline and the controller run get one each: neither then pays for the other's
	// objects, nor waits for thousands of them to be deleted.
	Stack        func(purpose string) (localDir string, stop func(), err error)
	N            int           // NginxOperators to create (default 1000, replicas 1)
	PerNamespace int           // NginxOperators per namespace (default 100)
	SteadyState  time.Duration // writes counted after convergence (default 60s; target 0)
	CreateRate   float64       // NginxOperator creates/s through the aggregator measured by the API scenarios; 0 = measure it here
	Logf         func(format string, args ...any)
}

// ConvergenceWrites are the writes made in one phase, counted by the controller and,
// independently, by the API servers, so that a broken counter cannot hide a write.
type ConvergenceWrites struct {
	// ByKind is nginx_operator_writes_total: the reconciler's successful writes
	// (Deployment, Service, NginxOperatorStatus).
	ByKind map[string]float64 `json:"by_kind"`
	// Failed is nginx_operator_write_errors_total by kind.
	Failed map[string]float64 `json:"failed,omitempty"`
	// ClientByMethod is every write request the controller process sent
	// (rest_client_requests_total by method), Events included.
	ClientByMethod map[string]float64 `json:"client_by_method"`
	// Server is what the servers counted (apiserver_request_total): applies of
	// deployments and services at kube-apiserver, writes of nginxoperators/status at our
	// apiserver. Nothing else applies or writes status on this stack.
	Server map[string]float64 `json:"server"`
	// Total is the larger of the controller's client-side count (Events included) and
	// the servers' count.
	Total     float64 `json:"total"`
	PerObject float64 `json:"per_object"`
}

// ConvergenceResult is what RunConvergence measured.
type ConvergenceResult struct {
	N                int     `json:"n"`
	Namespaces       int     `json:"namespaces"`
	Replicas         int     `json:"replicas"`
	CreateSeconds    float64 `json:"create_seconds"`
	ConvergeSeconds  float64 `json:"converge_seconds"`
	CreateRate       float64 `json:"create_rate_per_second"`
	CreateRateSource string  `json:"create_rate_source"`
	// LowerBoundSeconds is N / CreateRate: nothing converges before it exists.
	LowerBoundSeconds float64 `json:"lower_bound_seconds"`
	LowerBound        string  `json:"lower_bound"`
	RatioToLowerBound float64 `json:"ratio_to_lower_bound"`
	// WriteBoundSeconds is the controller's own minimum, 3 writes per object at the
	// same rate: its Deployment, its Service and one status update.
	WriteBoundSeconds    float64           `json:"write_bound_seconds"`
	Writes               ConvergenceWrites `json:"convergence_writes"`
	SteadyStateSeconds   float64           `json:"steady_state_seconds"`
	SteadyStateWrites    ConvergenceWrites `json:"steady_state_writes"`
	Reconciles           float64           `json:"reconciles"`
	SteadyReconciles     float64           `json:"steady_state_reconciles"`
	ControllerCPUSeconds float64           `json:"controller_cpu_seconds"`
	ControllerHeapBytes  float64           `json:"controller_heap_bytes"`
	// ControllerRSSBytes is the controller's resident memory once converged, and
	// ControllerPeakRSSBytes the most it held until then (VmRSS and VmHWM).
	ControllerRSSBytes     float64 `json:"controller_rss_bytes"`
	ControllerPeakRSSBytes float64 `json:"controller_peak_rss_bytes"`
	// Reviews are the SubjectAccessReviews our apiserver sent kube-apiserver while
	// converging (apiserver_delegated_authz_request_total), to authorize the controller's
	// requests and the benchmark's creates, and them per reconcile.
	Reviews             float64 `json:"subject_access_reviews"`
	ReviewsPerReconcile float64 `json:"subject_access_reviews_per_reconcile"`
	// ClusterWrites are the writes every client made to kube-apiserver while the
	// objects converged, by resource: what kube-controller-manager, the scheduler and
	// kwok add to the controller's own.
	ClusterWrites          map[string]float64 `json:"cluster_writes"`
	ClusterWritesPerObject float64            `json:"cluster_writes_per_object"`
	ClusterWriteRate       float64            `json:"cluster_writes_per_second"`
	// ServerSeconds is the mean time the servers took per write of the controller's
	// while converging (apiserver_request_duration_seconds), e.g. "APPLY services",
	// and per IPAddress kube-apiserver created for a Service's ClusterIP ("POST ipaddresses").
	ServerSeconds map[string]float64 `json:"server_seconds_per_write"`
	// ClusterIPBoundSeconds is N times the mean IPAddress create: kube-apiserver
	// allocates dynamic ClusterIPs one at a time (its MetaAllocator holds a mutex across
	// the IPAddress create), so no N Services can be created faster.
	ClusterIPBoundSeconds float64 `json:"cluster_ip_bound_seconds"`
	// BaselineSeconds is the cluster's own time to run the same N Deployments and
	// Services applied directly, without the controller (measureClusterBaseline).
	BaselineSeconds float64  `json:"baseline_seconds"`
	RatioToBaseline float64  `json:"ratio_to_baseline"`
	Notes           []string `json:"notes,omitempty"`
}

// minControllerWritesPerObject: a Deployment, a Service and one status update.
const minControllerWritesPerObject = 3

// convergenceBounds derives the lower bounds from N and the create rate.
func convergenceBounds(n int, createRate float64) (lower, writeBound float64, formula string) {
	if createRate <= 0 {
		return 0, 0, "no create rate"
	}
	lower = float64(n) / createRate
	writeBound = minControllerWritesPerObject * lower
	formula = fmt.Sprintf("N / create rate = %d / %.0f/s", n, createRate)
	return lower, writeBound, formula
}

const (
	convergenceCreateWorkers = 16
	// convergenceTimeout bounds each wait: the baseline's and the controller's. At
	// 10000 objects on two cores either takes minutes, as kube-apiserver allocates
	// ClusterIPs one at a time.
	convergenceTimeout         = 30 * time.Minute
	convergencePrefix          = "conv-"
	convergenceNamespacePrefix = "bench-convergence-"
	baselineNamespacePrefix    = "bench-baseline-"
)

// RunConvergence measures the cluster baseline on one fresh stack, then, on another,
// creates N NginxOperators (replicas 1, PerNamespace to a namespace) with the controller
// running, waits until every one is Available and rolled out with its Deployment and
// Service present, and counts the writes of that phase and of SteadyState afterwards.
func RunConvergence(ctx context.Context, cfg ConvergenceConfig) (*ConvergenceResult, error) {
	cfg.N = cmp.Or(cfg.N, 1000)
	cfg.PerNamespace = cmp.Or(cfg.PerNamespace, 100)
	cfg.SteadyState = cmp.Or(cfg.SteadyState, 60*time.Second)
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	layout := namespaceLayout{n: cfg.N, perNamespace: cfg.PerNamespace}
	res := &ConvergenceResult{N: cfg.N, Namespaces: layout.count(), Replicas: 1, CreateRate: cfg.CreateRate,
		CreateRateSource: "the API scenarios (creates through the aggregator)"}

	baseline, err := measureBaselineOnOwnStack(ctx, cfg, layout, logf)
	if err != nil {
		return nil, err
	}
	res.BaselineSeconds = baseline
	logf("convergence: baseline Available in %.1fs", res.BaselineSeconds)

	localDir, stop, err := cfg.Stack("the controller run")
	if err != nil {
		return nil, err
	}
	defer stop()
	s, err := newConvergenceStack(localDir)
	if err != nil {
		return nil, err
	}
	if err := s.checkNoOtherController(ctx); err != nil {
		return nil, err
	}
	if res.CreateRate <= 0 {
		// Measured before the controller runs, so that its work does not slow the creates.
		logf("convergence: measuring the create rate with %d NginxOperators", cfg.N)
		rate, err := s.measureCreateRate(ctx, layout)
		if err != nil {
			return nil, err
		}
		res.CreateRate, res.CreateRateSource = rate, "measured here before the controller started"
	}
	res.LowerBoundSeconds, res.WriteBoundSeconds, res.LowerBound = convergenceBounds(cfg.N, res.CreateRate)
	if err := s.createNamespaces(ctx, convergenceNamespacePrefix, layout.count()); err != nil {
		return nil, err
	}

	ctrlProc, err := startController(ctx, cfg.RepoRoot, localDir)
	if err != nil {
		return nil, err
	}
	defer ctrlProc.Stop()
	logf("convergence: controller started (metrics %s, pprof %s, log %s)", ctrlProc.MetricsURL, ctrlProc.PprofURL, ctrlProc.LogFile)
	s.ctrl = ctrlProc
	watch, err := s.watchNginxOperators(ctx)
	if err != nil {
		return nil, err
	}
	defer watch.stop()

	before, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := s.createAll(ctx, convergenceNamespacePrefix, layout); err != nil {
		return res, err
	}
	res.CreateSeconds = time.Since(start).Seconds()
	logf("convergence: created %d NginxOperators in %.1fs", cfg.N, res.CreateSeconds)
	if err := watch.waitConverged(ctx, cfg.N, start, logf); err != nil {
		return res, err
	}
	res.ConvergeSeconds = time.Since(start).Seconds()
	if res.LowerBoundSeconds > 0 {
		res.RatioToLowerBound = res.ConvergeSeconds / res.LowerBoundSeconds
	}
	res.RatioToBaseline = safeRatio(res.ConvergeSeconds, res.BaselineSeconds)
	logf("convergence: %d converged in %.1fs (lower bound %.1fs, cluster baseline %.1fs)", cfg.N, res.ConvergeSeconds, res.LowerBoundSeconds, res.BaselineSeconds)
	if err := s.checkChildren(ctx, watch); err != nil {
		return res, err
	}
	// Writes still in flight belong to convergence: count from the moment the
	// controller has nothing queued and nothing running.
	if err := s.waitControllerIdle(ctx); err != nil {
		return res, err
	}
	converged, err := s.snapshot(ctx)
	if err != nil {
		return res, err
	}
	res.Writes = convergenceWrites(before, converged, cfg.N)
	res.Reconciles = reconciles(before, converged)
	res.ControllerCPUSeconds = cpuSeconds(converged) - cpuSeconds(before)
	res.Reviews = reviews(before, converged)
	res.ReviewsPerReconcile = safeRatio(res.Reviews, res.Reconciles)
	res.ClusterWrites = metricDelta(
		before.kube.sum("apiserver_request_total", isWrite, "resource", "subresource"),
		converged.kube.sum("apiserver_request_total", isWrite, "resource", "subresource"))
	res.ClusterWritesPerObject = metricTotal(res.ClusterWrites) / float64(cfg.N)
	res.ClusterWriteRate = metricTotal(res.ClusterWrites) / res.ConvergeSeconds
	res.ServerSeconds = meanServerSeconds(before, converged)
	res.ClusterIPBoundSeconds = float64(cfg.N) * res.ServerSeconds["POST ipaddresses"]
	res.Notes = append(res.Notes, crossCheck("convergence", res.Writes)...)
	if res.ControllerRSSBytes, res.ControllerPeakRSSBytes, err = ctrlProc.RSS(); err != nil {
		res.Notes = append(res.Notes, "controller RSS: "+err.Error())
	}
	if heap, err := s.heapAfterGC(ctx); err == nil {
		res.ControllerHeapBytes = heap
	} else {
		res.Notes = append(res.Notes, "controller heap: "+err.Error())
	}

	logf("convergence: counting writes for %s of steady state", cfg.SteadyState)
	select {
	case <-time.After(cfg.SteadyState):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	steady, err := s.snapshot(ctx)
	if err != nil {
		return res, err
	}
	res.SteadyStateSeconds = cfg.SteadyState.Seconds()
	res.SteadyStateWrites = convergenceWrites(converged, steady, cfg.N)
	res.SteadyReconciles = reconciles(converged, steady)
	res.Notes = append(res.Notes, crossCheck("steady state", res.SteadyStateWrites)...)
	if n := watch.notConverged(); n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d NginxOperators left the converged state during steady state", n))
	}
	logf("convergence: %.0f writes in %s of steady state", res.SteadyStateWrites.Total, cfg.SteadyState)
	return res, nil
}

// measureBaselineOnOwnStack runs the cluster baseline on a stack of its own and stops
// it: the baseline's ten thousand pods then cost the controller run nothing.
func measureBaselineOnOwnStack(ctx context.Context, cfg ConvergenceConfig, layout namespaceLayout, logf func(string, ...any)) (float64, error) {
	localDir, stop, err := cfg.Stack("the cluster baseline")
	if err != nil {
		return 0, err
	}
	defer stop()
	s, err := newConvergenceStack(localDir)
	if err != nil {
		return 0, err
	}
	logf("convergence: baseline, the same %d Deployments and Services applied directly without the controller", cfg.N)
	return s.measureClusterBaseline(ctx, layout, logf)
}

// namespaceLayout spreads n objects over namespaces of perNamespace each, as tenants
// would: kube-controller-manager's controllers look up ReplicaSets, pods and
// EndpointSlices per namespace, so one namespace of ten thousand makes every sync
// walk ten thousand of them.
type namespaceLayout struct{ n, perNamespace int }

func (l namespaceLayout) count() int { return (l.n + l.perNamespace - 1) / l.perNamespace }

// of is the namespace and name of object i under prefix.
func (l namespaceLayout) of(prefix string, i int) (namespace, name string) {
	return fmt.Sprintf("%s%03d", prefix, i/l.perNamespace), fmt.Sprintf("%s%05d", convergencePrefix, i)
}
