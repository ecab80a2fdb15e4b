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
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// baselineFieldManager applies the baseline's children; it is not the controller's.
const baselineFieldManager = "nginx-operator-bench-baseline"

// measureClusterBaseline is the cluster's own floor for convergence: the same N
// Deployments and Services the controller would apply (built by the controller's own
// builders, spread over namespaces the same way), applied directly by the same number of concurrent
// clients while no controller runs, timed until every Deployment is Available. The
// controller cannot converge faster than the cluster runs its children; the ratio to
// this baseline is what the controller itself adds.
func (s *convergenceStack) measureClusterBaseline(ctx context.Context, layout namespaceLayout, logf func(string, ...any)) (float64, error) {
	if err := s.createNamespaces(ctx, baselineNamespacePrefix, layout.count()); err != nil {
		return 0, err
	}
	var available atomic.Int64
	changed := make(chan struct{}, 1)
	factory := informers.NewSharedInformerFactory(s.kube, 0)
	deployments := factory.Apps().V1().Deployments().Informer()
	// Counted as events arrive: the benchmark's own CPU is taken from the cluster.
	ours := func(d *appsv1.Deployment) bool {
		return d != nil && strings.HasPrefix(d.Namespace, baselineNamespacePrefix) && deploymentAvailable(d)
	}
	observe := func(before, after *appsv1.Deployment) {
		if ours(before) {
			available.Add(-1)
		}
		if ours(after) {
			available.Add(1)
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := deployments.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(nil, obj.(*appsv1.Deployment)) },
		UpdateFunc: func(old, obj any) { observe(old.(*appsv1.Deployment), obj.(*appsv1.Deployment)) },
	}); err != nil {
		return 0, err
	}
	informerCtx, stop := context.WithCancel(ctx)
	defer stop()
	factory.Start(informerCtx.Done())
	if !cache.WaitForCacheSync(informerCtx.Done(), deployments.HasSynced) {
		return 0, errors.New("the baseline's Deployment informer did not sync")
	}

	start := time.Now()
	if err := s.applyChildren(ctx, layout); err != nil {
		return 0, err
	}
	logf("convergence baseline: applied %d Deployments and Services in %.1fs", layout.n, time.Since(start).Seconds())
	ctx, cancel := context.WithTimeout(ctx, convergenceTimeout)
	defer cancel()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	for {
		ready := int(available.Load())
		if ready >= layout.n {
			return time.Since(start).Seconds(), nil
		}
		select {
		case <-changed:
		case <-progress.C:
			logf("convergence baseline: %d of %d Deployments Available after %s", ready, layout.n, time.Since(start).Round(time.Second))
		case <-ctx.Done():
			return 0, fmt.Errorf("baseline: %d of %d Deployments Available in %s: %w", ready, layout.n, time.Since(start).Round(time.Second), ctx.Err())
		}
	}
}

// deploymentAvailable is the Deployment controller's verdict, the same one the
// NginxOperator's Available condition follows.
func deploymentAvailable(d *appsv1.Deployment) bool {
	if d.Status.ObservedGeneration < d.Generation || d.Spec.Replicas == nil || d.Status.AvailableReplicas < *d.Spec.Replicas {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// applyChildren applies, from convergenceCreateWorkers goroutines, the Deployment and
// Service of every benchmark NginxOperator of layout, without owner references: their
// owners do not exist, and the garbage collector would delete children of a missing owner.
func (s *convergenceStack) applyChildren(ctx context.Context, layout namespaceLayout) error {
	replicas := int32(1)
	opts := metav1.ApplyOptions{FieldManager: baselineFieldManager, Force: true}
	return forEachObject(ctx, layout.n, func(i int) error {
		ns, name := layout.of(baselineNamespacePrefix, i)
		no := &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: benchSpec(&replicas)}
		d, err := builders.Deployment(no, "")
		if err != nil {
			return err
		}
		d.OwnerReferences = nil
		svc := builders.Service(no)
		svc.OwnerReferences = nil
		if _, err := s.kube.AppsV1().Deployments(ns).Apply(ctx, d, opts); err != nil {
			return fmt.Errorf("baseline Deployment %s/%s: %w", ns, name, err)
		}
		if _, err := s.kube.CoreV1().Services(ns).Apply(ctx, svc, opts); err != nil {
			return fmt.Errorf("baseline Service %s/%s: %w", ns, name, err)
		}
		return nil
	})
}
