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
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller"
)

// baselineFieldManager applies the baseline's children; it is not the controller's.
const baselineFieldManager = "nginx-operator-bench-baseline"

// measureClusterBaseline is the cluster's own floor for convergence: the same N
// Deployments and Services the controller would apply (built by the controller's own
// builders), applied directly by the same number of concurrent clients while no
// controller runs, timed until every Deployment is Available. The controller cannot
// converge faster than the cluster runs its children; the ratio to this baseline is
// what the controller itself adds. Everything is deleted again, and the namespace waited
// for, before it returns.
func (s *convergenceStack) measureClusterBaseline(ctx context.Context, n int, logf func(string, ...any)) (float64, error) {
	ns, err := s.newNamespace(ctx, "bench-convergence-baseline-")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := s.deleteNamespaceAndWait(context.WithoutCancel(ctx), ns); err != nil {
			logf("convergence baseline: %v", err)
		}
	}()

	available := make(chan struct{}, 1)
	factory := informers.NewSharedInformerFactoryWithOptions(s.kube, 0, informers.WithNamespace(ns))
	deployments := factory.Apps().V1().Deployments().Informer()
	wake := func(any) {
		select {
		case available <- struct{}{}:
		default:
		}
	}
	if _, err := deployments.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: wake, UpdateFunc: func(_, o any) { wake(o) }}); err != nil {
		return 0, err
	}
	informerCtx, stop := context.WithCancel(ctx)
	defer stop()
	factory.Start(informerCtx.Done())
	if !cache.WaitForCacheSync(informerCtx.Done(), deployments.HasSynced) {
		return 0, errors.New("the baseline's Deployment informer did not sync")
	}

	start := time.Now()
	if err := s.applyChildren(ctx, ns, n); err != nil {
		return 0, err
	}
	logf("convergence baseline: applied %d Deployments and Services in %.1fs", n, time.Since(start).Seconds())
	ctx, cancel := context.WithTimeout(ctx, convergenceTimeout)
	defer cancel()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	for {
		ready := 0
		for _, obj := range deployments.GetStore().List() {
			if deploymentAvailable(obj.(*appsv1.Deployment)) {
				ready++
			}
		}
		if ready >= n {
			return time.Since(start).Seconds(), nil
		}
		select {
		case <-available:
		case <-progress.C:
			logf("convergence baseline: %d of %d Deployments Available after %s", ready, n, time.Since(start).Round(time.Second))
		case <-ctx.Done():
			return 0, fmt.Errorf("baseline: %d of %d Deployments Available in %s: %w", ready, n, time.Since(start).Round(time.Second), ctx.Err())
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
// Service of n benchmark NginxOperators, without owner references: their owners do not
// exist, and the garbage collector would delete children of a missing owner.
func (s *convergenceStack) applyChildren(ctx context.Context, ns string, n int) error {
	indexes := make(chan int)
	errs := make(chan error, convergenceCreateWorkers)
	var wg sync.WaitGroup
	replicas := int32(1)
	opts := metav1.ApplyOptions{FieldManager: baselineFieldManager, Force: true}
	for range convergenceCreateWorkers {
		wg.Go(func() {
			for i := range indexes {
				no := &v1alpha2.NginxOperator{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%05d", convergencePrefix, i), Namespace: ns},
					Spec:       benchSpec(&replicas),
				}
				d, err := controller.Deployment(no, "")
				if err != nil {
					errs <- err
					return
				}
				d.OwnerReferences = nil
				svc := controller.Service(no)
				svc.OwnerReferences = nil
				if _, err := s.kube.AppsV1().Deployments(ns).Apply(ctx, d, opts); err != nil {
					errs <- fmt.Errorf("baseline Deployment %s: %w", no.Name, err)
					return
				}
				if _, err := s.kube.CoreV1().Services(ns).Apply(ctx, svc, opts); err != nil {
					errs <- fmt.Errorf("baseline Service %s: %w", no.Name, err)
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

// deleteNamespaceAndWait deletes a namespace and waits until it is gone, so that its
// pods' teardown does not load the cluster during the next measurement.
func (s *convergenceStack) deleteNamespaceAndWait(ctx context.Context, ns string) error {
	if err := s.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	deadline := time.Now().Add(convergenceTimeout)
	for {
		_, err := s.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s still there %s after its deletion (last error: %v)", ns, convergenceTimeout, err)
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
