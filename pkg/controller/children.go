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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/apply"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/content"
)

// ensureDeployment applies the desired Deployment unless what the controller owns of the
// live one already matches. A same-named Deployment controlled by something else is
// left alone and reported. It returns the Deployment as it now is: the applied one, or
// the live one when the apply failed, so status shows what still serves.
func (r *Reconciler) ensureDeployment(ctx context.Context, no *v1alpha2.NginxOperator, contentHash string) (*appsv1.Deployment, string, error) {
	desired, err := builders.DeploymentWithExporter(no, contentHash, cmp.Or(r.ExporterImage, builders.DefaultExporterImage))
	if err != nil {
		return nil, "", err
	}
	live := &appsv1.Deployment{}
	res, err := apply.Ensure(ctx, r.applier(), no, no.Name, live, desired,
		apply.Kind[*appsv1.Deployment, *appsv1ac.DeploymentApplyConfiguration]{Name: "Deployment", Extract: appsv1ac.ExtractDeployment, Repair: r.dropStrayContainerPorts})
	var current *appsv1.Deployment
	if res.Found {
		current = live
	}
	if err != nil || !res.Applied {
		return current, res.Blocked, err
	}
	applied, err := apply.Applied[appsv1.Deployment](desired)
	if err != nil {
		return current, "", err
	}
	return applied, "", nil
}

// ensureService does for the Service what ensureDeployment does for the Deployment.
func (r *Reconciler) ensureService(ctx context.Context, no *v1alpha2.NginxOperator) (string, error) {
	res, err := apply.Ensure(ctx, r.applier(), no, no.Name, &corev1.Service{}, builders.Service(no),
		apply.Kind[*corev1.Service, *corev1ac.ServiceApplyConfiguration]{Name: "Service", Extract: corev1ac.ExtractService, Repair: r.dropStrayServicePorts})
	return res.Blocked, err
}

// ensureConfigMap keeps the ConfigMap of spec.config.inline (with stage's two
// configurations when it is staged), and deletes it when the spec no longer has an
// inline configuration.
func (r *Reconciler) ensureConfigMap(ctx context.Context, no *v1alpha2.NginxOperator, stage *content.Stage) (string, error) {
	desired := builders.ConfigMap(no)
	if stage != nil {
		desired = builders.StagedConfigMap(no, stage.Stable, stage.Candidate)
	}
	if desired == nil {
		// Only the metadata of ConfigMaps is cached: enough to find a stale one of ours.
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		return "", r.applier().DeleteIfOwned(ctx, no, builders.ConfigMapName(no), meta, "ConfigMap")
	}
	res, err := apply.Ensure(ctx, r.applier(), no, builders.ConfigMapName(no), &corev1.ConfigMap{}, desired,
		apply.Kind[*corev1.ConfigMap, *corev1ac.ConfigMapApplyConfiguration]{Name: "ConfigMap", Extract: corev1ac.ExtractConfigMap, Uncached: true})
	return res.Blocked, err
}

// ensurePodDisruptionBudget keeps the PodDisruptionBudget spec.podDisruptionBudget asks
// for, and deletes it when the spec no longer asks for one.
func (r *Reconciler) ensurePodDisruptionBudget(ctx context.Context, no *v1alpha2.NginxOperator) (string, error) {
	desired := builders.PodDisruptionBudget(no)
	if desired == nil {
		return "", r.applier().DeleteIfOwned(ctx, no, no.Name, &policyv1.PodDisruptionBudget{}, "PodDisruptionBudget")
	}
	res, err := apply.Ensure(ctx, r.applier(), no, no.Name, &policyv1.PodDisruptionBudget{}, desired,
		apply.Kind[*policyv1.PodDisruptionBudget, *policyv1ac.PodDisruptionBudgetApplyConfiguration]{Name: "PodDisruptionBudget", Extract: policyv1ac.ExtractPodDisruptionBudget})
	return res.Blocked, err
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
	if err := r.Client.List(ctx, pods, client.InNamespace(no.Namespace), client.MatchingLabels(builders.SelectorLabels(no))); err != nil {
		return nil, err
	}
	return pods.Items, nil
}
