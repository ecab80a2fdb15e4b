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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
)

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

// createNamespaces creates the namespaces prefix000 to prefix<count-1>.
func (s *convergenceStack) createNamespaces(ctx context.Context, prefix string, count int) error {
	for i := range count {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%03d", prefix, i)}}
		if _, err := s.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}

// createAll creates the NginxOperators of layout in the namespaces under prefix from
// convergenceCreateWorkers goroutines, retrying what a client may retry (429, 503,
// timeouts).
func (s *convergenceStack) createAll(ctx context.Context, prefix string, layout namespaceLayout) error {
	replicas := int32(1)
	return forEachObject(ctx, layout.n, func(i int) error {
		ns, name := layout.of(prefix, i)
		return s.createOne(ctx, ns, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: benchSpec(&replicas)})
	})
}

// forEachObject runs do for 0..n-1 from convergenceCreateWorkers goroutines and stops at
// the first error.
func forEachObject(ctx context.Context, n int, do func(i int) error) error {
	indexes := make(chan int)
	errs := make(chan error, convergenceCreateWorkers)
	var wg sync.WaitGroup
	for range convergenceCreateWorkers {
		wg.Go(func() {
			for i := range indexes {
				if err := do(i); err != nil {
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
		case indexes <- i:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(indexes)
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

// measureCreateRate creates the NginxOperators of layout in namespaces of their own
// while no controller runs, then deletes them: without a controller they have no
// children.
func (s *convergenceStack) measureCreateRate(ctx context.Context, layout namespaceLayout) (float64, error) {
	const prefix = "bench-create-rate-"
	if err := s.createNamespaces(ctx, prefix, layout.count()); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := s.createAll(ctx, prefix, layout); err != nil {
		return 0, err
	}
	rate := float64(layout.n) / time.Since(start).Seconds()
	for i := range layout.count() {
		ns := fmt.Sprintf("%s%03d", prefix, i)
		if err := s.operator.OperatorV1alpha2().NginxOperators(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return 0, fmt.Errorf("deleting the create-rate objects of %s: %w", ns, err)
		}
	}
	return rate, nil
}

// checkChildren fails unless every NginxOperator the watch holds has its Deployment
// and Service. Listed once, at the end, so that the benchmark's own watches of ten
// thousand Deployments and Services do not load the cluster it measures.
func (s *convergenceStack) checkChildren(ctx context.Context, w *convergenceWatch) error {
	selector := metav1.ListOptions{LabelSelector: builders.ManagedByLabel + "=" + builders.FieldManager, Limit: 500}
	deployments, err := pagedKeys(ctx, selector, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return s.kube.AppsV1().Deployments("").List(ctx, opts)
	})
	if err != nil {
		return fmt.Errorf("listing the Deployments: %w", err)
	}
	services, err := pagedKeys(ctx, selector, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return s.kube.CoreV1().Services("").List(ctx, opts)
	})
	if err != nil {
		return fmt.Errorf("listing the Services: %w", err)
	}
	var missing []string
	for _, key := range w.keys() {
		if !deployments[key] {
			missing = append(missing, "Deployment "+key)
		}
		if !services[key] {
			missing = append(missing, "Service "+key)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d children missing after convergence, e.g. %s", len(missing), missing[0])
	}
	return nil
}

// pagedKeys is the namespace/name of every object list returns, page by page.
func pagedKeys(ctx context.Context, opts metav1.ListOptions, list pager.ListPageFunc) (map[string]bool, error) {
	keys := map[string]bool{}
	err := pager.New(list).EachListItem(ctx, opts, func(obj runtime.Object) error {
		m, err := apimeta.Accessor(obj)
		if err != nil {
			return err
		}
		keys[m.GetNamespace()+"/"+m.GetName()] = true
		return nil
	})
	return keys, err
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
