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
	"net/http"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	opinformers "github.com/example/nginx-operator/pkg/generated/informers/externalversions"
)

// ConvergenceConfig configures the controller convergence scenario.
type ConvergenceConfig struct {
	RepoRoot    string        // bin/controller is built there (make build)
	LocalDir    string        // the private stack's LOCAL_DIR: kubeconfig (admin), nginx-operator-controller.kubeconfig
	N           int           // NginxOperators to create (default 1000, replicas 1)
	SteadyState time.Duration // writes counted after convergence (default 60s; target 0)
	CreateRate  float64       // NginxOperator creates/s through the aggregator measured by the API scenarios; 0 = measure it here
	Logf        func(format string, args ...any)
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
	convergenceTimeout       = 15 * time.Minute
	convergencePrefix        = "conv-"
)

// RunConvergence creates N NginxOperators (replicas 1) in a fresh namespace with its own
// controller running, waits until every one is Available and rolled out with its
// Deployment and Service present, counts the writes of that phase and of SteadyState
// afterwards, and removes what it created.
func RunConvergence(ctx context.Context, cfg ConvergenceConfig) (*ConvergenceResult, error) {
	if cfg.N <= 0 {
		cfg.N = 1000
	}
	if cfg.SteadyState <= 0 {
		cfg.SteadyState = 60 * time.Second
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s, err := newConvergenceStack(cfg.LocalDir)
	if err != nil {
		return nil, err
	}
	if err := s.checkNoOtherController(ctx); err != nil {
		return nil, err
	}
	if err := s.checkNoNginxOperators(ctx); err != nil {
		return nil, err
	}
	res := &ConvergenceResult{N: cfg.N, Replicas: 1, CreateRate: cfg.CreateRate, CreateRateSource: "the API scenarios (creates through the aggregator)"}
	if res.CreateRate <= 0 {
		// Measured before the controller runs, so that its work does not slow the creates.
		logf("convergence: measuring the create rate with %d NginxOperators", cfg.N)
		rate, err := s.measureCreateRate(ctx, cfg.N)
		if err != nil {
			return nil, err
		}
		res.CreateRate, res.CreateRateSource = rate, "measured here before the controller started"
	}
	res.LowerBoundSeconds, res.WriteBoundSeconds, res.LowerBound = convergenceBounds(cfg.N, res.CreateRate)
	logf("convergence: baseline, the same %d Deployments and Services applied directly without the controller", cfg.N)
	if res.BaselineSeconds, err = s.measureClusterBaseline(ctx, cfg.N, logf); err != nil {
		return nil, err
	}
	logf("convergence: baseline Available in %.1fs", res.BaselineSeconds)

	ctrlProc, err := startController(ctx, cfg.RepoRoot, cfg.LocalDir)
	if err != nil {
		return nil, err
	}
	defer ctrlProc.Stop()
	logf("convergence: controller started (metrics %s, pprof %s, log %s)", ctrlProc.MetricsURL, ctrlProc.PprofURL, ctrlProc.LogFile)
	s.ctrl = ctrlProc

	ns, err := s.newNamespace(ctx, "bench-convergence-")
	if err != nil {
		return nil, err
	}
	watch, err := s.watchNamespace(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer watch.stop()
	defer func() {
		logf("convergence: deleting the NginxOperators of %s and waiting for their Deployments and Services to go", ns)
		if err := s.cleanUp(context.WithoutCancel(ctx), ns, watch); err != nil {
			res.Notes = append(res.Notes, "clean-up: "+err.Error())
			logf("convergence: clean-up: %v", err)
		}
	}()

	before, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := s.createAll(ctx, ns, cfg.N); err != nil {
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
	res.ClusterWrites = metricDelta(
		before.kube.sum("apiserver_request_total", isWrite, "resource", "subresource"),
		converged.kube.sum("apiserver_request_total", isWrite, "resource", "subresource"))
	res.ClusterWritesPerObject = metricTotal(res.ClusterWrites) / float64(cfg.N)
	res.ClusterWriteRate = metricTotal(res.ClusterWrites) / res.ConvergeSeconds
	res.ServerSeconds = meanServerSeconds(before, converged)
	res.ClusterIPBoundSeconds = float64(cfg.N) * res.ServerSeconds["POST ipaddresses"]
	res.Notes = append(res.Notes, crossCheck("convergence", res.Writes)...)
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

// convergenceStack is the admin's view of the running stack.
type convergenceStack struct {
	kube     kubernetes.Interface
	operator clientset.Interface
	// operatorMetrics reads our apiserver's /metrics directly (the aggregator does not
	// proxy it).
	operatorMetrics *rest.RESTClient
	ctrl            *controllerProcess
}

func newConvergenceStack(localDir string) (*convergenceStack, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(localDir, "kubeconfig"))
	if err != nil {
		return nil, fmt.Errorf("loading the admin kubeconfig of %s: %w", localDir, err)
	}
	// The benchmark is the only client it waits for: no client-side throttling.
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	operator, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	svc, err := kube.CoreV1().Services("nginx-operator-system").Get(context.Background(), "nginx-operator-apiserver", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("finding our apiserver's port: %w", err)
	}
	if len(svc.Spec.Ports) == 0 {
		return nil, errors.New("the nginx-operator-apiserver Service has no port")
	}
	direct := rest.CopyConfig(cfg)
	direct.Host = fmt.Sprintf("https://127.0.0.1:%d", svc.Spec.Ports[0].Port)
	direct.CAData, direct.CAFile = nil, filepath.Join(localDir, "pki", "nginx-operator-ca.crt")
	direct.GroupVersion = &v1alpha2.SchemeGroupVersion
	direct.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	metricsClient, err := rest.UnversionedRESTClientFor(direct)
	if err != nil {
		return nil, err
	}
	return &convergenceStack{kube: kube, operator: operator, operatorMetrics: metricsClient}, nil
}

// checkNoOtherController refuses to run beside the stack's own controller, which would
// share the work and hide it from the counts: start the stack with START_CONTROLLER=false.
func (s *convergenceStack) checkNoOtherController(ctx context.Context) error {
	lease, err := s.kube.CoordinationV1().Leases("nginx-operator-system").Get(ctx, "nginx-operator-controller", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if lease.Spec.RenewTime != nil && time.Since(lease.Spec.RenewTime.Time) < time.Minute {
		return fmt.Errorf("another nginx-operator controller holds its Lease (renewed %s ago): start the stack with START_CONTROLLER=false",
			time.Since(lease.Spec.RenewTime.Time).Round(time.Second))
	}
	return nil
}

// checkNoNginxOperators refuses to start when NginxOperators exist already: the
// controller would reconcile them too, and their work would count as convergence's.
func (s *convergenceStack) checkNoNginxOperators(ctx context.Context) error {
	list, err := s.operator.OperatorV1alpha2().NginxOperators("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("looking for existing NginxOperators: %w", err)
	}
	if len(list.Items) == 0 {
		return nil
	}
	more := int64(0)
	if list.RemainingItemCount != nil {
		more = *list.RemainingItemCount
	}
	return fmt.Errorf("%d NginxOperators exist already (one is %s/%s): the controller would reconcile them as well; delete them first",
		1+more, list.Items[0].Namespace, list.Items[0].Name)
}

func (s *convergenceStack) newNamespace(ctx context.Context, prefix string) (string, error) {
	ns, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return ns.Name, nil
}

// createAll creates n NginxOperators from convergenceCreateWorkers goroutines, retrying
// what a client may retry (429, 503, timeouts).
func (s *convergenceStack) createAll(ctx context.Context, ns string, n int) error {
	names := make(chan string)
	errs := make(chan error, convergenceCreateWorkers)
	var wg sync.WaitGroup
	replicas := int32(1)
	for range convergenceCreateWorkers {
		wg.Go(func() {
			for name := range names {
				no := &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: benchSpec(&replicas)}
				if err := s.createOne(ctx, ns, no); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for i := range n {
		select {
		case names <- fmt.Sprintf("%s%05d", convergencePrefix, i):
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(names)
	wg.Wait()
	close(errs)
	return errors.Join(err, <-errs)
}

func (s *convergenceStack) createOne(ctx context.Context, ns string, no *v1alpha2.NginxOperator) error {
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := s.operator.OperatorV1alpha2().NginxOperators(ns).Create(ctx, no, metav1.CreateOptions{})
		retryable := apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
		if err == nil || !retryable || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("creating NginxOperator %s/%s: %w", ns, no.Name, err)
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// measureCreateRate creates n NginxOperators in a namespace of their own while no
// controller runs, then deletes them.
func (s *convergenceStack) measureCreateRate(ctx context.Context, n int) (float64, error) {
	ns, err := s.newNamespace(ctx, "bench-convergence-rate-")
	if err != nil {
		return 0, err
	}
	defer s.kube.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{})
	start := time.Now()
	if err := s.createAll(ctx, ns, n); err != nil {
		return 0, err
	}
	rate := float64(n) / time.Since(start).Seconds()
	// Without a controller they have no children: deleting them is enough.
	if err := s.operator.OperatorV1alpha2().NginxOperators(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return 0, fmt.Errorf("deleting the create-rate objects: %w", err)
	}
	return rate, nil
}

// cleanUp deletes the NginxOperators, waits until the garbage collector has removed
// their Deployments and Services, and deletes the namespace.
func (s *convergenceStack) cleanUp(ctx context.Context, ns string, w *convergenceWatch) error {
	if err := s.operator.OperatorV1alpha2().NginxOperators(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting the NginxOperators: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, convergenceTimeout)
	defer cancel()
	if err := w.waitEmpty(ctx); err != nil {
		return err
	}
	return s.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
}

// waitControllerIdle waits until the controller's workqueue is empty and no reconcile
// runs, checking its metrics five times a second for half a minute at most.
func (s *convergenceStack) waitControllerIdle(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap, err := s.ctrl.Scrape(ctx)
		if err != nil {
			return err
		}
		queued := snap.value("workqueue_depth", labelIn("name", "nginxoperator"))
		running := snap.value("controller_runtime_active_workers", labelIn("controller", "nginxoperator"))
		if queued == 0 && running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the controller still had %.0f NginxOperators queued and %.0f reconciling 30s after convergence", queued, running)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// probeSnapshot is one scrape of the controller and both API servers.
type probeSnapshot struct {
	controller, kube, operator metricSnapshot
}

func (s *convergenceStack) snapshot(ctx context.Context) (probeSnapshot, error) {
	var snap probeSnapshot
	var err error
	if snap.controller, err = s.ctrl.Scrape(ctx); err != nil {
		return snap, err
	}
	if snap.kube, err = scrapeREST(ctx, s.kube.Discovery().RESTClient()); err != nil {
		return snap, fmt.Errorf("scraping kube-apiserver: %w", err)
	}
	if snap.operator, err = scrapeREST(ctx, s.operatorMetrics); err != nil {
		return snap, fmt.Errorf("scraping our apiserver: %w", err)
	}
	return snap, nil
}

func scrapeREST(ctx context.Context, c rest.Interface) (metricSnapshot, error) {
	body, err := c.Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return parseMetrics(body)
}

// heapAfterGC is the controller's heap right after a collection: fetching a heap
// profile with gc=1 runs one, and the Go metrics then show the live heap.
func (s *convergenceStack) heapAfterGC(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.ctrl.PprofURL+"/heap?gc=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	snap, err := s.ctrl.Scrape(ctx)
	if err != nil {
		return 0, err
	}
	if _, ok := snap["go_memstats_heap_alloc_bytes"]; !ok {
		return 0, errors.New("the controller exports no go_memstats_heap_alloc_bytes")
	}
	return snap.value("go_memstats_heap_alloc_bytes", nil), nil
}

// convergenceWrites counts the writes between two snapshots.
func convergenceWrites(before, after probeSnapshot, n int) ConvergenceWrites {
	w := ConvergenceWrites{
		ByKind:         metricDelta(before.controller.sum("nginx_operator_writes_total", nil, "kind"), after.controller.sum("nginx_operator_writes_total", nil, "kind")),
		Failed:         metricDelta(before.controller.sum("nginx_operator_write_errors_total", nil, "kind"), after.controller.sum("nginx_operator_write_errors_total", nil, "kind")),
		ClientByMethod: metricDelta(before.controller.sum("rest_client_requests_total", isWrite, "method"), after.controller.sum("rest_client_requests_total", isWrite, "method")),
		Server:         serverWrites(after),
	}
	for k, v := range serverWrites(before) {
		w.Server[k] -= v
		if w.Server[k] == 0 {
			delete(w.Server, k)
		}
	}
	w.Total = max(metricTotal(w.ClientByMethod), metricTotal(w.Server))
	if n > 0 {
		w.PerObject = w.Total / float64(n)
	}
	return w
}

// serverWrites is what the servers counted of the controller's writes: only the
// controller applies Deployments and Services, and only it writes NginxOperator status.
func serverWrites(s probeSnapshot) map[string]float64 {
	out := s.kube.sum("apiserver_request_total",
		allOf(labelIn("verb", "APPLY"), labelIn("resource", "deployments", "services"), labelIn("subresource", "")),
		"verb", "resource")
	for k, v := range s.operator.sum("apiserver_request_total",
		allOf(isWrite, labelIn("resource", "nginxoperators"), labelIn("subresource", "status")),
		"verb", "resource") {
		out[k+"/status"] += v
	}
	return out
}

// meanServerSeconds is the servers' mean duration of the controller's kinds of writes
// between two snapshots.
func meanServerSeconds(before, after probeSnapshot) map[string]float64 {
	kube := func(l map[string]string) bool {
		return l["subresource"] == "" && (l["verb"] == "APPLY" && (l["resource"] == "deployments" || l["resource"] == "services") ||
			l["verb"] == "POST" && l["resource"] == "ipaddresses")
	}
	status := allOf(labelIn("verb", "PUT"), labelIn("resource", "nginxoperators"), labelIn("subresource", "status"))
	out := map[string]float64{}
	for _, m := range []struct {
		snap   func(probeSnapshot) metricSnapshot
		match  func(map[string]string) bool
		suffix string
	}{
		{func(p probeSnapshot) metricSnapshot { return p.kube }, kube, ""},
		{func(p probeSnapshot) metricSnapshot { return p.operator }, status, "/status"},
	} {
		sumsBefore, countsBefore := m.snap(before).histogram("apiserver_request_duration_seconds", m.match, "verb", "resource")
		sumsAfter, countsAfter := m.snap(after).histogram("apiserver_request_duration_seconds", m.match, "verb", "resource")
		sums, counts := metricDelta(sumsBefore, sumsAfter), metricDelta(countsBefore, countsAfter)
		for k, n := range counts {
			out[k+m.suffix] = sums[k] / n
		}
	}
	return out
}

// crossCheck notes where the controller's own counters disagree with the servers'.
func crossCheck(phase string, w ConvergenceWrites) []string {
	var notes []string
	pairs := []struct{ kind, server string }{
		{"Deployment", "APPLY deployments"},
		{"Service", "APPLY services"},
		{"NginxOperatorStatus", "PUT nginxoperators/status"},
	}
	for _, p := range pairs {
		counted := w.ByKind[p.kind] + w.Failed[p.kind]
		if counted != w.Server[p.server] {
			notes = append(notes, fmt.Sprintf("%s: the controller counted %.0f %s writes, the server %.0f (%s)", phase, counted, p.kind, w.Server[p.server], p.server))
		}
	}
	return notes
}

func reconciles(before, after probeSnapshot) float64 {
	match := labelIn("controller", "nginxoperator")
	return after.controller.value("controller_runtime_reconcile_total", match) - before.controller.value("controller_runtime_reconcile_total", match)
}

func cpuSeconds(s probeSnapshot) float64 { return s.controller.value("process_cpu_seconds_total", nil) }

// convergenceWatch follows the namespace's NginxOperators, Deployments and Services
// through informers; every change wakes the waiter, which recounts from the caches.
type convergenceWatch struct {
	opLists interface {
		List(labels.Selector) ([]*v1alpha2.NginxOperator, error)
	}
	deployments, services cache.Indexer
	changed               chan struct{}
	cancel                context.CancelFunc
}

func (s *convergenceStack) watchNamespace(ctx context.Context, ns string) (*convergenceWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &convergenceWatch{changed: make(chan struct{}, 1), cancel: cancel}
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.wake() },
		UpdateFunc: func(any, any) { w.wake() },
		DeleteFunc: func(any) { w.wake() },
	}
	kubeInformers := informers.NewSharedInformerFactoryWithOptions(s.kube, 0, informers.WithNamespace(ns))
	opInformers := opinformers.NewSharedInformerFactoryWithOptions(s.operator, 0, opinformers.WithNamespace(ns))
	deployments := kubeInformers.Apps().V1().Deployments().Informer()
	services := kubeInformers.Core().V1().Services().Informer()
	nos := opInformers.Operator().V1alpha2().NginxOperators()
	for _, inf := range []cache.SharedIndexInformer{deployments, services, nos.Informer()} {
		if _, err := inf.AddEventHandler(notify); err != nil {
			cancel()
			return nil, err
		}
	}
	w.deployments, w.services = deployments.GetIndexer(), services.GetIndexer()
	w.opLists = nos.Lister().NginxOperators(ns)
	kubeInformers.Start(ctx.Done())
	opInformers.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), deployments.HasSynced, services.HasSynced, nos.Informer().HasSynced) {
		cancel()
		return nil, errors.New("the convergence informers did not sync")
	}
	return w, nil
}

func (w *convergenceWatch) wake() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *convergenceWatch) stop() { w.cancel() }

// convergedCount counts the NginxOperators that are Available and rolled out
// (Progressing False) and have their Deployment and Service, and all it sees.
func (w *convergenceWatch) convergedCount() (converged, all int) {
	nos, _ := w.opLists.List(labels.Everything())
	for _, no := range nos {
		if isConverged(no, w.deployments, w.services) {
			converged++
		}
	}
	return converged, len(nos)
}

func isConverged(no *v1alpha2.NginxOperator, deployments, services cache.Indexer) bool {
	if !apimeta.IsStatusConditionTrue(no.Status.Conditions, v1alpha2.ConditionAvailable) ||
		!apimeta.IsStatusConditionFalse(no.Status.Conditions, v1alpha2.ConditionProgressing) ||
		no.Status.ObservedGeneration != no.Generation {
		return false
	}
	key := no.Namespace + "/" + no.Name
	_, hasDeployment, _ := deployments.GetByKey(key)
	_, hasService, _ := services.GetByKey(key)
	return hasDeployment && hasService
}

func (w *convergenceWatch) notConverged() int {
	converged, all := w.convergedCount()
	return all - converged
}

// waitConverged returns once n NginxOperators have converged, logging progress every
// ten seconds.
func (w *convergenceWatch) waitConverged(ctx context.Context, n int, start time.Time, logf func(string, ...any)) error {
	ctx, cancel := context.WithTimeout(ctx, convergenceTimeout)
	defer cancel()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	for {
		converged, all := w.convergedCount()
		if converged >= n {
			return nil
		}
		select {
		case <-w.changed:
		case <-progress.C:
			logf("convergence: %d of %d converged after %s", converged, all, time.Since(start).Round(time.Second))
		case <-ctx.Done():
			return fmt.Errorf("%d of %d NginxOperators converged in %s: %w", converged, n, time.Since(start).Round(time.Second), ctx.Err())
		}
	}
}

// waitEmpty returns once no NginxOperator, Deployment or Service is left.
func (w *convergenceWatch) waitEmpty(ctx context.Context) error {
	for {
		nos, _ := w.opLists.List(labels.Everything())
		left := len(nos) + len(w.deployments.ListKeys()) + len(w.services.ListKeys())
		if left == 0 {
			return nil
		}
		select {
		case <-w.changed:
		case <-ctx.Done():
			return fmt.Errorf("%d NginxOperators, Deployments and Services still there: %w", left, ctx.Err())
		}
	}
}
