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
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The two functions here are the controller's only plain Updates; everything else is
// server-side apply. Apply can remove only fields its own manager owns, and these ports
// were set by another manager, so only a full Update can drop them. The Update carries the
// live object's resourceVersion: a concurrent change makes it fail with a conflict and
// the reconcile is retried on the newer object.

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
		if wanted[portKey(p.Port, p.Protocol)] {
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
	return countWrite("Service", r.Client.Update(ctx, live, client.FieldOwner(FieldManager)))
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
		if containers[i].Name != ContainerName {
			continue
		}
		kept := make([]corev1.ContainerPort, 0, len(containers[i].Ports))
		for _, p := range containers[i].Ports {
			if wanted[portKey(p.ContainerPort, protocolOrTCP(p.Protocol))] {
				kept = append(kept, p)
			}
		}
		if len(kept) == len(containers[i].Ports) {
			return nil
		}
		containers[i].Ports = kept
		return countWrite("Deployment", r.Client.Update(ctx, live, client.FieldOwner(FieldManager)))
	}
	return nil
}

func portKey(port int32, protocol corev1.Protocol) string {
	return fmt.Sprintf("%d/%s", port, protocol)
}
