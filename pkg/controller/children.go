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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/utils/ptr"
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
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: no.Namespace, Name: ConfigMapName(no)}, meta)
		if err != nil {
			return "", client.IgnoreNotFound(err)
		}
		if owner := metav1.GetControllerOf(meta); owner == nil || owner.UID != no.UID {
			return "", nil // someone else's ConfigMap of that name is none of our business
		}
		return "", r.deleteOwned(ctx, no, meta, true, "ConfigMap")
	}
	live := &corev1.ConfigMap{}
	found, blocked, err := r.getOwnedUncached(ctx, no, ConfigMapName(no), live)
	if err != nil || blocked != "" {
		return blocked, err
	}
	if found {
		owned, err := corev1ac.ExtractConfigMap(live, FieldManager)
		if err != nil {
			return "", err
		}
		if same, err := sameFields(owned, desired); err != nil || same {
			return "", err
		}
	}
	return "", r.apply(ctx, no, desired, "ConfigMap", found)
}

// ensurePodDisruptionBudget keeps the PodDisruptionBudget spec.podDisruptionBudget asks
// for, and deletes it when the spec no longer asks for one.
func (r *Reconciler) ensurePodDisruptionBudget(ctx context.Context, no *v1alpha2.NginxOperator) (string, error) {
	desired := PodDisruptionBudget(no)
	live := &policyv1.PodDisruptionBudget{}
	if desired == nil {
		// The cache holds the PodDisruptionBudgets the controller labelled: a stale one
		// of ours is there, and nothing needs to be read around it.
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(no), live)
		if err != nil {
			return "", client.IgnoreNotFound(err)
		}
		if owner := metav1.GetControllerOf(live); owner == nil || owner.UID != no.UID {
			return "", nil
		}
		return "", r.deleteOwned(ctx, no, live, true, "PodDisruptionBudget")
	}
	found, blocked, err := r.getOwned(ctx, no, no.Name, live)
	if err != nil || blocked != "" {
		return blocked, err
	}
	if found {
		owned, err := policyv1ac.ExtractPodDisruptionBudget(live, FieldManager)
		if err != nil {
			return "", err
		}
		if same, err := sameFields(owned, desired); err != nil || same {
			return "", err
		}
	}
	return "", r.apply(ctx, no, desired, "PodDisruptionBudget", found)
}

// deleteOwned deletes a child the spec no longer asks for; getOwned has checked that
// this NginxOperator controls it. The UID precondition keeps a replacement safe.
func (r *Reconciler) deleteOwned(ctx context.Context, no *v1alpha2.NginxOperator, live client.Object, found bool, kind string) error {
	if !found {
		return nil
	}
	err := countWrite(kind, r.Client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.GetUID())}))
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	r.event(no, corev1.EventTypeNormal, "Deleted", "Delete"+kind, "deleted %s %s, which the spec no longer asks for", kind, live.GetName())
	return nil
}

// liveDeployment is the Deployment as the cache has it, nil when there is none.
func (r *Reconciler) liveDeployment(ctx context.Context, no *v1alpha2.NginxOperator) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(no), d); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return d, nil
}

// podFailures reads the NginxOperator's pods from the cache (which holds only pods
// carrying ManagedByLabel) and explains those that cannot run.
func (r *Reconciler) podFailures(ctx context.Context, no *v1alpha2.NginxOperator) (*PodFailure, time.Duration, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(no.Namespace), client.MatchingLabels(SelectorLabels(no))); err != nil {
		return nil, 0, err
	}
	failure, recheck := SummarizePodFailures(pods.Items, r.Clock.Now())
	return failure, recheck, nil
}
