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
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Reconciler makes the Deployment and Service of an NginxOperator match its spec and
// reports what it sees in status. It writes only what differs: at steady state a
// reconcile makes no API writes at all.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the informer cache; used right after a write, when the
	// cache may still hold the old Deployment and would report a stale rollout.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
}

// Reconcile handles one NginxOperator.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	outcome := "success"
	defer func() {
		if err != nil {
			outcome = "error"
		}
		reconcilesTotal.WithLabelValues(outcome).Inc()
	}()

	no := &v1alpha2.NginxOperator{}
	if err := r.Client.Get(ctx, req.NamespacedName, no); err != nil {
		// Deleted: the garbage collector removes the children through their owner references.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !no.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	var obs Observation
	if obs.Deployment, obs.Blocked, err = r.ensureDeployment(ctx, no); err != nil {
		return ctrl.Result{}, err
	}
	serviceBlocked, err := r.ensureService(ctx, no)
	if err != nil {
		return ctrl.Result{}, err
	}
	if obs.Blocked == "" {
		obs.Blocked = serviceBlocked
	}
	if obs.Blocked != "" {
		outcome = "blocked"
	}
	return ctrl.Result{}, r.updateStatus(ctx, no, obs)
}

// ensureDeployment applies the desired Deployment unless what the controller owns of the
// live one already matches. A same-named Deployment controlled by something else is
// left alone and reported.
func (r *Reconciler) ensureDeployment(ctx context.Context, no *v1alpha2.NginxOperator) (*appsv1.Deployment, string, error) {
	desired, err := Deployment(no)
	if err != nil {
		return nil, "", err
	}
	live := &appsv1.Deployment{}
	found, blocked, err := r.getOwned(ctx, no, live)
	if err != nil || blocked != "" {
		return nil, blocked, err
	}
	if found {
		if err := r.dropStrayContainerPorts(ctx, live, desired); err != nil {
			return nil, "", err
		}
		owned, err := appsv1ac.ExtractDeployment(live, FieldManager)
		if err != nil {
			return nil, "", err
		}
		if same, err := sameFields(owned, desired); err != nil || same {
			return live, "", err
		}
	}
	if err := r.Client.Apply(ctx, desired, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		r.event(no, corev1.EventTypeWarning, "ApplyFailed", "ApplyDeployment", "applying Deployment %s: %v", no.Name, err)
		return nil, "", err
	}
	writesTotal.WithLabelValues("Deployment").Inc()
	r.event(no, corev1.EventTypeNormal, createdOrUpdated(found), "ApplyDeployment", "%s Deployment %s", verb(found), no.Name)
	applied := &appsv1.Deployment{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(no), applied); err != nil {
		return nil, "", client.IgnoreNotFound(err)
	}
	return applied, "", nil
}

// ensureService does for the Service what ensureDeployment does for the Deployment.
func (r *Reconciler) ensureService(ctx context.Context, no *v1alpha2.NginxOperator) (string, error) {
	desired := Service(no)
	live := &corev1.Service{}
	found, blocked, err := r.getOwned(ctx, no, live)
	if err != nil || blocked != "" {
		return blocked, err
	}
	if found {
		if err := r.dropStrayServicePorts(ctx, live, desired); err != nil {
			return "", err
		}
		owned, err := corev1ac.ExtractService(live, FieldManager)
		if err != nil {
			return "", err
		}
		if same, err := sameFields(owned, desired); err != nil || same {
			return "", err
		}
	}
	if err := r.Client.Apply(ctx, desired, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		r.event(no, corev1.EventTypeWarning, "ApplyFailed", "ApplyService", "applying Service %s: %v", no.Name, err)
		return "", err
	}
	writesTotal.WithLabelValues("Service").Inc()
	r.event(no, corev1.EventTypeNormal, createdOrUpdated(found), "ApplyService", "%s Service %s", verb(found), no.Name)
	return "", nil
}

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
	writesTotal.WithLabelValues("Service").Inc()
	return r.Client.Update(ctx, live, client.FieldOwner(FieldManager))
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
		writesTotal.WithLabelValues("Deployment").Inc()
		return r.Client.Update(ctx, live, client.FieldOwner(FieldManager))
	}
	return nil
}

func portKey(port int32, protocol corev1.Protocol) string {
	return fmt.Sprintf("%d/%s", port, protocol)
}

// getOwned reads the same-named child into obj. It reports a block, and emits a
// Warning event, when the child exists but another controller (or nobody) controls it.
func (r *Reconciler) getOwned(ctx context.Context, no *v1alpha2.NginxOperator, obj client.Object) (found bool, blocked string, err error) {
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: no.Namespace, Name: no.Name}, obj); err != nil {
		return false, "", client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOf(obj); owner != nil && owner.UID == no.UID {
		return true, "", nil
	}
	kind := kindOf(obj)
	blocked = fmt.Sprintf("%s %s/%s exists and is not controlled by this NginxOperator; rename or delete it", kind, no.Namespace, no.Name)
	r.event(no, corev1.EventTypeWarning, "OwnershipConflict", "Apply"+kind, "%s", blocked)
	return true, blocked, nil
}

// updateStatus writes status through the status subresource, only when it changed.
func (r *Reconciler) updateStatus(ctx context.Context, no *v1alpha2.NginxOperator, obs Observation) error {
	status := ComputeStatus(no, obs, metav1.NewTime(r.Clock.Now()))
	if apiequality.Semantic.DeepEqual(status, no.Status) {
		return nil
	}
	updated := no.DeepCopy()
	updated.Status = status
	writesTotal.WithLabelValues("NginxOperatorStatus").Inc()
	if err := r.Client.Status().Update(ctx, updated); err != nil {
		if apierrors.IsConflict(err) {
			// A newer version is on its way through the watch; it triggers another reconcile.
			log.FromContext(ctx).V(1).Info("status update conflicted; waiting for the newer object")
			return nil
		}
		return err
	}
	return nil
}

func (r *Reconciler) event(no *v1alpha2.NginxOperator, eventType, reason, action, note string, args ...interface{}) {
	if r.Recorder != nil {
		r.Recorder.Eventf(no, nil, eventType, reason, action, note, args...)
	}
}

func kindOf(obj runtime.Object) string {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *corev1.Service:
		return "Service"
	}
	return fmt.Sprintf("%T", obj)
}

func createdOrUpdated(found bool) string {
	if found {
		return "Updated"
	}
	return "Created"
}

func verb(found bool) string {
	if found {
		return "updated"
	}
	return "created"
}
