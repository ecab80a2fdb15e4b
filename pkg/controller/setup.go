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

package controller

import (
	"cmp"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Backoff of a failing reconcile: it starts at minRetryDelay and doubles per failure.
const (
	minRetryDelay        = 5 * time.Millisecond
	DefaultMaxRetryDelay = time.Minute
)

// SetupWithManager registers the reconciler with mgr: it reconciles every NginxOperator
// and is woken by changes to the Deployments and Services the NginxOperators own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	maxRetryDelay := cmp.Or(r.MaxRetryDelay, DefaultMaxRetryDelay)
	return ctrl.NewControllerManagedBy(mgr).
		Named("nginxoperator").
		For(&v1alpha2.NginxOperator{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.MaxConcurrentReconciles,
			// Per object: exponential backoff up to maxRetryDelay. Overall: the same 10 qps
			// bucket controller-runtime's default limiter has, so many failing objects
			// together cannot flood the API server.
			RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
				workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](minRetryDelay, maxRetryDelay),
				&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
			),
		}).
		Complete(r)
}
