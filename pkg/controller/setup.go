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
	"context"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// Backoff of a failing reconcile: it starts at minRetryDelay and doubles per failure.
const (
	minRetryDelay        = 5 * time.Millisecond
	DefaultMaxRetryDelay = time.Minute
)

// SetupWithManager registers the reconciler with mgr: it reconciles every NginxOperator
// and is woken by changes to what the NginxOperators own (Deployments, Services,
// PodDisruptionBudgets, the ConfigMap of an inline configuration), to their pods, and to
// the ConfigMaps and Secrets they mount; changes to what runs come first (followUp). Of ConfigMaps and Secrets only the metadata is
// watched; the reconciler reads the few it mounts.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha2.NginxOperator{}, referencesIndex, references); err != nil {
		return err
	}
	maxRetryDelay := cmp.Or(r.MaxRetryDelay, DefaultMaxRetryDelay)
	// What an NginxOperator controls, as Owns() would watch it, but at followUpPriority.
	owned := followUp(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha2.NginxOperator{}, handler.OnlyControllerOwner()))
	return ctrl.NewControllerManagedBy(mgr).
		Named("nginxoperator").
		For(&v1alpha2.NginxOperator{}).
		Watches(&appsv1.Deployment{}, owned).
		Watches(&corev1.Service{}, owned).
		Watches(&policyv1.PodDisruptionBudget{}, owned).
		Watches(&corev1.Pod{}, followUp(handler.EnqueueRequestsFromMapFunc(podOwner))).
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.referencing("ConfigMap"))).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.referencing("Secret"))).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.MaxConcurrentReconciles,
			// Per object: exponential backoff up to maxRetryDelay. Overall: a 10 qps bucket
			// (burst 100), as client-go's DefaultTypedControllerRateLimiter has, so many
			// failing objects together cannot flood the API server. controller-runtime
			// v0.25's own default, with its priority queue, is the per-item backoff alone.
			RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
				workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](minRetryDelay, maxRetryDelay),
				&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
			),
		}).
		Complete(r)
}

// referencesIndex indexes NginxOperators by the ConfigMaps and Secrets they mount, as
// "ConfigMap/<name>" and "Secret/<name>".
const referencesIndex = "operator.example.com/references"

func references(obj client.Object) []string {
	no, ok := obj.(*v1alpha2.NginxOperator)
	if !ok {
		return nil
	}
	var refs []string
	if cfg := no.Spec.Config; cfg != nil {
		if cfg.ConfigMapKeyRef != nil {
			refs = append(refs, "ConfigMap/"+cfg.ConfigMapKeyRef.Name)
		} else {
			refs = append(refs, "ConfigMap/"+builders.ConfigMapName(no))
		}
	}
	for _, f := range no.Spec.Files {
		refs = append(refs, "ConfigMap/"+f.ConfigMapName)
	}
	for _, t := range no.Spec.TLS {
		refs = append(refs, "Secret/"+t.SecretName)
	}
	return refs
}

// referencing maps a ConfigMap or Secret to the NginxOperators of its namespace that
// mount it.
func (r *Reconciler) referencing(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &v1alpha2.NginxOperatorList{}
		if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{referencesIndex: kind + "/" + obj.GetName()}); err != nil {
			log.FromContext(ctx).Error(err, "listing the NginxOperators that mount", "kind", kind, "name", obj.GetName())
			return nil
		}
		requests := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return requests
	}
}

// podOwner maps a pod to its NginxOperator by the instance label: pods are owned by
// ReplicaSets, not by the NginxOperator. The cache holds only pods with builders.ManagedByLabel.
func podOwner(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()["app.kubernetes.io/instance"]
	if name == "" || obj.GetLabels()[builders.ManagedByLabel] != builders.FieldManager {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}
