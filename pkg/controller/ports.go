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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/example/nginx-operator/pkg/controller/builders"
)

// The two functions here are the controller's only plain Updates; everything else is
// server-side apply. Apply can remove only fields its own manager owns, and these ports
// were set by another manager, so only a full Update can drop them. The Update carries the
// live object's resourceVersion: a concurrent change makes it fail with a conflict and
// the reconcile is retried on the newer object. A port only this controller's apply owns
// is left to the apply, which replaces it in the same write: an Update first would give
// the Deployment a template without the port, and the pods a rollout of their own.

// dropStrayServicePorts removes ports that someone else added to our Service. Ports are
// keyed by number and protocol, so an edited port number is a new entry that
// server-side apply would keep beside ours, with a clashing name; the port list of the
// Service belongs to the NginxOperator as a whole. The apply that follows restores
// our own ports; a placeholder keeps the Service valid if none of ours is left.
func (r *Reconciler) dropStrayServicePorts(ctx context.Context, live *corev1.Service, desired *corev1ac.ServiceApplyConfiguration) error {
	wanted := map[string]bool{}
	for _, p := range desired.Spec.Ports {
		wanted[portKey(*p.Port, *p.Protocol)] = true
	}
	kept := make([]corev1.ServicePort, 0, len(live.Spec.Ports))
	for _, p := range live.Spec.Ports {
		stray, err := strayPort(live, wanted, p.Port, p.Protocol, "port", "spec", "ports")
		if err != nil {
			return err
		}
		if !stray {
			kept = append(kept, p)
		}
	}
	if len(kept) == len(live.Spec.Ports) {
		return nil
	}
	if len(kept) == 0 && len(desired.Spec.Ports) > 0 {
		first := desired.Spec.Ports[0]
		kept = append(kept, corev1.ServicePort{Name: *first.Name, Port: *first.Port, Protocol: *first.Protocol, TargetPort: *first.TargetPort})
	}
	live.Spec.Ports = kept
	return countWrite("Service", r.Client.Update(ctx, live, client.FieldOwner(builders.FieldManager)))
}

// dropStrayContainerPorts does for the nginx container's ports what
// dropStrayServicePorts does for the Service: an edited port number would otherwise
// stay beside ours under the same name and make the Deployment invalid.
func (r *Reconciler) dropStrayContainerPorts(ctx context.Context, live *appsv1.Deployment, desired *appsv1ac.DeploymentApplyConfiguration) error {
	wanted := map[string]bool{}
	for _, p := range desired.Spec.Template.Spec.Containers[0].Ports {
		wanted[portKey(*p.ContainerPort, *p.Protocol)] = true
	}
	containers := live.Spec.Template.Spec.Containers
	for i := range containers {
		if containers[i].Name != builders.ContainerName {
			continue
		}
		kept := make([]corev1.ContainerPort, 0, len(containers[i].Ports))
		for _, p := range containers[i].Ports {
			stray, err := strayPort(live, wanted, p.ContainerPort, builders.ProtocolOrTCP(p.Protocol), "containerPort",
				"spec", "template", "spec", "containers", fieldpath.KeyByFields("name", builders.ContainerName), "ports")
			if err != nil {
				return err
			}
			if !stray {
				kept = append(kept, p)
			}
		}
		if len(kept) == len(containers[i].Ports) {
			return nil
		}
		containers[i].Ports = kept
		return countWrite("Deployment", r.Client.Update(ctx, live, client.FieldOwner(builders.FieldManager)))
	}
	return nil
}

// strayPort reports whether a live port, keyed by its number (under the list's key field
// numberKey) and protocol, must be dropped before the apply: the spec does not want it
// and apply alone cannot remove it, because a manager other than this controller's apply
// owns some of it, or no manager does.
func strayPort(live metav1.Object, wanted map[string]bool, number int32, protocol corev1.Protocol, numberKey string, list ...any) (bool, error) {
	if wanted[portKey(number, protocol)] {
		return false, nil
	}
	path, err := fieldpath.MakePath(append(list, fieldpath.KeyByFields(numberKey, int64(number), "protocol", string(protocol)))...)
	if err != nil {
		return false, err
	}
	ours := false
	for _, entry := range live.GetManagedFields() {
		if entry.FieldsV1 == nil {
			continue
		}
		owned := &fieldpath.Set{}
		if err := owned.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
			return false, err
		}
		if !ownsSome(owned, path) {
			continue
		}
		if entry.Manager != builders.FieldManager || entry.Operation != metav1.ManagedFieldsOperationApply {
			return true, nil
		}
		ours = true
	}
	return !ours, nil
}

// ownsSome reports whether owned holds the element at path or any field below it.
func ownsSome(owned *fieldpath.Set, path fieldpath.Path) bool {
	if owned.Has(path) {
		return true
	}
	for _, element := range path {
		child, ok := owned.Children.Get(element)
		if !ok {
			return false
		}
		owned = child
	}
	return !owned.Empty()
}

func portKey(port int32, protocol corev1.Protocol) string {
	return fmt.Sprintf("%d/%s", port, protocol)
}
