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
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// BlockedRecheckInterval is how often a blocked NginxOperator looks again for the
// same-named stranger: strangers are not in the cache, so their removal sends no event.
const BlockedRecheckInterval = 10 * time.Second

// Reconciler makes the Deployment and Service of an NginxOperator match its spec and
// reports what it sees in status. It writes only what differs: at steady state a
// reconcile makes no API writes at all.
type Reconciler struct {
	// Client reads from the informer cache, which holds only the Deployments and
	// Services that carry ManagedByLabel.
	Client client.Client
	// Applier sends the server-side applies; nil means Client.
	Applier client.Writer
	// APIReader reads around the cache, to find a same-named object the cache does not
	// hold. After an apply the response is the object as it now is: no read is needed.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock

	// MaxConcurrentReconciles is how many NginxOperators are reconciled at once (0: one).
	MaxConcurrentReconciles int
	// MaxRetryDelay caps the backoff of a failing NginxOperator (0: DefaultMaxRetryDelay).
	MaxRetryDelay time.Duration
	// ExporterImage runs the nginx-exporter sidecar ("": DefaultExporterImage).
	ExporterImage string
	// ReloadState reads a pod's sidecar in Reload mode (nil: HTTPReloadState).
	ReloadState ReloadStateReader

	// digests of the mounted ConfigMaps and Secrets, by resourceVersion.
	digests digests
	// awaited are the pods asked for new content in Reload mode.
	awaited awaitedPods
}

// Reconcile handles one NginxOperator. Every step is tried and the status is written
// whatever happened, so a Deployment or Service the API server refuses shows in
// OperatorDegraded; the error is then returned, and the workqueue retries with backoff.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	no := &v1alpha2.NginxOperator{}
	if err := r.Client.Get(ctx, req.NamespacedName, no); err != nil {
		// Deleted: the garbage collector removes the children through their owner references.
		if apierrors.IsNotFound(err) {
			r.awaited.forgetGone(req.NamespacedName, nil)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !no.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	obs, operandErr := r.ensureOperands(ctx, no)
	statusErr := r.updateStatus(ctx, no, obs)
	reconcilesTotal.WithLabelValues(outcome(obs, operandErr, statusErr)).Inc()
	if err := errors.Join(operandErr, statusErr); err != nil {
		return ctrl.Result{}, err
	}
	if obs.Blocked != "" {
		return ctrl.Result{RequeueAfter: BlockedRecheckInterval}, nil
	}
	// A pod that runs but is not ready yet is looked at again when it would count as
	// failing: the passing of time sends no event.
	return ctrl.Result{RequeueAfter: obs.Recheck}, nil
}

// ensureOperands ensures the ConfigMap of an inline configuration, the Deployment, the
// Service and the PodDisruptionBudget, and looks at the pods; a failure of one step
// does not keep the others from being tried.
func (r *Reconciler) ensureOperands(ctx context.Context, no *v1alpha2.NginxOperator) (Observation, error) {
	contentHash, volumes, problems, refused, contentErr := r.mountedContent(ctx, no)
	configMapBlocked, configMapErr := r.ensureConfigMap(ctx, no)
	var deployment *appsv1.Deployment
	var deploymentBlocked, withheld string
	var deploymentErr error
	switch {
	case contentErr != nil:
		// Without the hash the pods could not follow the content: keep them as they are.
		deploymentErr = fmt.Errorf("reading what spec.config, spec.files and spec.tls mount: %w", contentErr)
		deployment, _ = r.liveDeployment(ctx, no)
	case len(refused) > 0:
		// What must never be mounted keeps the pods as they are until the spec or the
		// reference is fixed; a change of either reconciles again.
		withheld = "the Deployment is not updated: " + strings.Join(refused, "; ")
		deployment, _ = r.liveDeployment(ctx, no)
	case configMapBlocked != "":
		// The pods would mount a ConfigMap someone else writes: its writer would choose
		// what nginx runs, with the pods' Secrets. Kept as they are until it is gone.
		configMapBlocked += "; the Deployment is not updated until then"
		deployment, _ = r.liveDeployment(ctx, no)
	default:
		deployment, deploymentBlocked, deploymentErr = r.ensureDeployment(ctx, no, contentHash)
	}
	serviceBlocked, serviceErr := r.ensureService(ctx, no)
	pdbBlocked, pdbErr := r.ensurePodDisruptionBudget(ctx, no)
	pods, podsErr := r.pods(ctx, no)
	podFailure, recheck := SummarizePodFailures(pods, r.Clock.Now())
	// In Reload mode the pods get content the kubelet can mount: what is missing or
	// refused waits, as a rollout would.
	var reloadObs ReloadObservation
	var reloadErr error
	if Reloads(&no.Spec) && contentErr == nil && len(refused) == 0 && configMapBlocked == "" && len(problems) == 0 && len(volumes) > 0 {
		var reloadRecheck time.Duration
		reloadObs, reloadRecheck, reloadErr = r.ensurePodContent(ctx, no, reload.FormatContentHashes(volumes), pods)
		if recheck == 0 || (reloadRecheck > 0 && reloadRecheck < recheck) {
			recheck = reloadRecheck
		}
	}
	obs := Observation{
		Deployment:        deployment,
		Blocked:           cmp.Or(configMapBlocked, deploymentBlocked, serviceBlocked, pdbBlocked),
		DeploymentFailure: joinFailures(failure(configMapErr), failure(deploymentErr), withheld),
		ServiceFailure:    joinFailures(failure(serviceErr), failure(pdbErr)),
		ReferenceProblems: problems,
		PodFailure:        podFailure,
		Reload:            reloadObs,
		Recheck:           recheck,
	}
	return obs, errors.Join(configMapErr, deploymentErr, serviceErr, pdbErr, podsErr, reloadErr)
}

func joinFailures(failures ...string) string {
	kept := failures[:0]
	for _, f := range failures {
		if f != "" {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, "; ")
}

// failure is what status reports of an error. A conflict only means the cache was
// behind; the retry resolves it, so it is not worth a condition change.
func failure(err error) string {
	if err == nil || apierrors.IsConflict(err) {
		return ""
	}
	return err.Error()
}

// outcome is the result label of nginx_operator_reconciles_total.
func outcome(obs Observation, operandErr, statusErr error) string {
	switch {
	case obs.DeploymentFailure != "" || obs.ServiceFailure != "":
		return "operand_failed"
	case operandErr != nil || statusErr != nil:
		return "error"
	case obs.Blocked != "":
		return "blocked"
	}
	return "success"
}

// ensureDeployment applies the desired Deployment unless what the controller owns of the
// live one already matches. A same-named Deployment controlled by something else is
// left alone and reported. It returns the Deployment as it now is: the applied one, or
// the live one when the apply failed, so status shows what still serves.
func (r *Reconciler) ensureDeployment(ctx context.Context, no *v1alpha2.NginxOperator, contentHash string) (*appsv1.Deployment, string, error) {
	desired, err := DeploymentWithExporter(no, contentHash, cmp.Or(r.ExporterImage, DefaultExporterImage))
	if err != nil {
		return nil, "", err
	}
	live := &appsv1.Deployment{}
	res, err := ensureChild(ctx, r, no, no.Name, live, desired,
		childKind[*appsv1.Deployment, *appsv1ac.DeploymentApplyConfiguration]{name: "Deployment", extract: appsv1ac.ExtractDeployment, repair: r.dropStrayContainerPorts})
	var current *appsv1.Deployment
	if res.found {
		current = live
	}
	if err != nil || !res.applied {
		return current, res.blocked, err
	}
	// The client decodes the apply's response into desired: that is the Deployment as
	// it now is, newer than the cache, without reading it again.
	applied, err := convert[appsv1.Deployment](desired)
	if err != nil {
		return current, "", err
	}
	return applied, "", nil
}

// ensureService does for the Service what ensureDeployment does for the Deployment.
func (r *Reconciler) ensureService(ctx context.Context, no *v1alpha2.NginxOperator) (string, error) {
	res, err := ensureChild(ctx, r, no, no.Name, &corev1.Service{}, Service(no),
		childKind[*corev1.Service, *corev1ac.ServiceApplyConfiguration]{name: "Service", extract: corev1ac.ExtractService, repair: r.dropStrayServicePorts})
	return res.blocked, err
}

// apply sends a server-side apply of a child and reports it in an event and metrics.
func (r *Reconciler) apply(ctx context.Context, no *v1alpha2.NginxOperator, obj runtime.ApplyConfiguration, kind string, found bool) error {
	var applier client.Writer = r.Client
	if r.Applier != nil {
		applier = r.Applier
	}
	err := countWrite(kind, applier.Apply(ctx, obj, client.FieldOwner(FieldManager), client.ForceOwnership))
	if err != nil {
		r.event(no, corev1.EventTypeWarning, "ApplyFailed", "Apply"+kind, "applying %s %s: %v", kind, no.Name, err)
		return err
	}
	r.event(no, corev1.EventTypeNormal, createdOrUpdated(found), "Apply"+kind, "%s %s %s", verb(found), kind, no.Name)
	return nil
}

// getOwned reads the child called name into obj, from the cache and, when the cache
// does not hold it, from the API server. It reports a block, and emits a Warning event,
// when the child exists but another controller (or nobody) controls it.
func (r *Reconciler) getOwned(ctx context.Context, no *v1alpha2.NginxOperator, name string, obj client.Object) (found bool, blocked string, err error) {
	key := client.ObjectKey{Namespace: no.Namespace, Name: name}
	err = r.Client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		// The cache holds only labelled objects: ask the API server before an apply
		// could take over a same-named stranger.
		err = r.APIReader.Get(ctx, key, obj)
	}
	return r.controlled(no, obj, err)
}

// getOwnedUncached is getOwned for kinds the controller caches no full objects of
// (ConfigMaps: a cache would hold every ConfigMap of the cluster). Only the ConfigMap of an
// inline configuration is read so, by name: its data is compared with what the spec asks
// for, so that a steady state makes no writes.
func (r *Reconciler) getOwnedUncached(ctx context.Context, no *v1alpha2.NginxOperator, name string, obj client.Object) (found bool, blocked string, err error) {
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: no.Namespace, Name: name}, obj)
	return r.controlled(no, obj, err)
}

func (r *Reconciler) controlled(no *v1alpha2.NginxOperator, obj client.Object, getErr error) (found bool, blocked string, err error) {
	if getErr != nil {
		return false, "", client.IgnoreNotFound(getErr)
	}
	if owner := metav1.GetControllerOf(obj); owner != nil && owner.UID == no.UID {
		return true, "", nil
	}
	kind := kindOf(obj)
	blocked = fmt.Sprintf("%s %s/%s exists and is not controlled by this NginxOperator; rename or delete it", kind, no.Namespace, obj.GetName())
	r.event(no, corev1.EventTypeWarning, "OwnershipConflict", "Apply"+kind, "%s", blocked)
	return true, blocked, nil
}

// updateStatus writes status through the status subresource, only when it changed.
func (r *Reconciler) updateStatus(ctx context.Context, no *v1alpha2.NginxOperator, obs Observation) error {
	status := ComputeStatus(no, obs, metav1.NewTime(r.Clock.Now()))
	if apiequality.Semantic.DeepEqual(status, no.Status) {
		return nil
	}
	// A Warning event when the NginxOperator stalls, or stalls for another reason:
	// kubectl describe and event-based alerting see it without reading conditions.
	now, before := apimeta.FindStatusCondition(status.Conditions, v1alpha2.ConditionStalled), apimeta.FindStatusCondition(no.Status.Conditions, v1alpha2.ConditionStalled)
	if now != nil && now.Status == metav1.ConditionTrue && (before == nil || before.Status != metav1.ConditionTrue || before.Reason != now.Reason) {
		r.event(no, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
	}
	updated := no.DeepCopy()
	updated.Status = status
	if err := countWrite("NginxOperatorStatus", r.Client.Status().Update(ctx, updated)); err != nil {
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
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *corev1.Service:
		return "Service"
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	case *policyv1.PodDisruptionBudget:
		return "PodDisruptionBudget"
	case *corev1.Pod:
		return "Pod"
	case *metav1.PartialObjectMetadata:
		return o.Kind
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
