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
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// ensureConfigMap keeps the ConfigMap of spec.config.inline, and deletes it when the
// spec no longer has an inline configuration.
func (r *Reconciler) ensureConfigMap(ctx context.Context, no *v1alpha2.NginxOperator) (string, error) {
	desired := ConfigMap(no)
	if desired == nil {
		// Only the metadata of ConfigMaps is cached: enough to find a stale one of ours.
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		return "", r.deleteIfOwned(ctx, no, ConfigMapName(no), meta, "ConfigMap")
	}
	res, err := ensureChild(ctx, r, no, ConfigMapName(no), &corev1.ConfigMap{}, desired,
		childKind[*corev1.ConfigMap, *corev1ac.ConfigMapApplyConfiguration]{name: "ConfigMap", extract: corev1ac.ExtractConfigMap, uncached: true})
	return res.blocked, err
}

// ensurePodDisruptionBudget keeps the PodDisruptionBudget spec.podDisruptionBudget asks
// for, and deletes it when the spec no longer asks for one.
func (r *Reconciler) ensurePodDisruptionBudget(ctx context.Context, no *v1alpha2.NginxOperator) (string, error) {
	desired := PodDisruptionBudget(no)
	if desired == nil {
		return "", r.deleteIfOwned(ctx, no, no.Name, &policyv1.PodDisruptionBudget{}, "PodDisruptionBudget")
	}
	res, err := ensureChild(ctx, r, no, no.Name, &policyv1.PodDisruptionBudget{}, desired,
		childKind[*policyv1.PodDisruptionBudget, *policyv1ac.PodDisruptionBudgetApplyConfiguration]{name: "PodDisruptionBudget", extract: policyv1ac.ExtractPodDisruptionBudget})
	return res.blocked, err
}

// liveDeployment is the Deployment as the cache has it, nil when there is none.
func (r *Reconciler) liveDeployment(ctx context.Context, no *v1alpha2.NginxOperator) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(no), d); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return d, nil
}

// pods reads the NginxOperator's pods from the cache, which holds only pods carrying
// ManagedByLabel.
func (r *Reconciler) pods(ctx context.Context, no *v1alpha2.NginxOperator) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(no.Namespace), client.MatchingLabels(SelectorLabels(no))); err != nil {
		return nil, err
	}
	return pods.Items, nil
}
