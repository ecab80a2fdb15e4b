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

// Package controller reconciles NginxOperators: it reads one and what it mounts, decides
// what its children must be with the pure builders (builders), writes them through the
// generic apply (apply), follows content in place in Reload mode (content), and reports
// what it saw in status, events and metrics.
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
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/apply"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/content"
)

// BlockedRecheckInterval is how often a blocked NginxOperator looks again for the
// same-named stranger: strangers are not in the cache, so their removal sends no event.
const BlockedRecheckInterval = 10 * time.Second

// Reconciler makes the Deployment and Service of an NginxOperator match its spec and
// reports what it sees in status. It writes only what differs: at steady state a
// reconcile makes no API writes at all.
type Reconciler struct {
	// Client reads from the informer cache, which holds only the Deployments and
	// Services that carry builders.ManagedByLabel.
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
	// ExporterImage runs the nginx-exporter sidecar ("": builders.DefaultExporterImage).
	ExporterImage string
	// ReloadState reads a pod's sidecar in Reload mode (nil: content.HTTPReloadState).
	ReloadState content.ReloadStateReader
	// Traffic reads a pod's traffic from its sidecar in a staged reload (nil:
	// content.HTTPTraffic).
	Traffic content.TrafficReader

	// tracker remembers mounted objects' digests and the pods asked for new content.
	tracker content.Tracker
}

// Reconcile handles one NginxOperator. Every step is tried and the status is written
// whatever happened, so a Deployment or Service the API server refuses shows in
// OperatorDegraded; the error is then returned, and the workqueue retries with backoff.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	no := &v1alpha2.NginxOperator{}
	if err := r.Client.Get(ctx, req.NamespacedName, no); err != nil {
		// Deleted: the garbage collector removes the children through their owner references.
		if apierrors.IsNotFound(err) {
			r.tracker.ForgetGone(req.NamespacedName, nil)
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
	pods, podsErr := r.pods(ctx, no)
	mounted, contentErr := r.tracker.Mounted(ctx, r.cluster(), no)
	stage, contentErr := r.planStage(ctx, no, pods, &mounted, contentErr)
	problems, refused := mounted.Problems, mounted.Refused
	var configMapBlocked string
	var configMapErr error
	// A staged configuration whose stage is not known keeps its ConfigMap as it is.
	if stage != nil || !builders.Stages(&no.Spec) {
		configMapBlocked, configMapErr = r.ensureConfigMap(ctx, no, stage)
	}
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
		deployment, deploymentBlocked, deploymentErr = r.ensureDeployment(ctx, no, mounted.Hash)
	}
	serviceBlocked, serviceErr := r.ensureService(ctx, no)
	pdbBlocked, pdbErr := r.ensurePodDisruptionBudget(ctx, no)
	podFailure, recheck := SummarizePodFailures(pods, r.Clock.Now())
	// In Reload mode the pods get content the kubelet can mount: what is missing or
	// refused waits, as a rollout would.
	var reloadObs content.ReloadObservation
	var reloadErr error
	if builders.Reloads(&no.Spec) && contentErr == nil && len(refused) == 0 && configMapBlocked == "" && len(problems) == 0 && len(mounted.Volumes) > 0 {
		want := content.Everywhere(reload.FormatContentHashes(mounted.Volumes))
		if stage != nil {
			want = stagedWant(mounted.Volumes, stage)
		}
		var reloadRecheck time.Duration
		reloadObs, reloadRecheck, reloadErr = r.tracker.EnsurePodContent(ctx, r.cluster(), no, want, pods)
		recheck = sooner(recheck, reloadRecheck)
		if stage != nil && stage.Analyzing() && reloadErr == nil {
			recheck = sooner(recheck, r.tracker.Analyze(ctx, r.cluster(), no, stage, stagedHashes(mounted.Volumes, true), pods))
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
		ConfigMaps:        mounted.ConfigMaps,
		ConfigMapsRead:    contentErr == nil,
		CanaryKnown:       contentErr == nil,
	}
	if stage != nil {
		obs.Canary = stage.Status
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

// event records an event about regarding, when the Reconciler has a recorder.
func (r *Reconciler) event(regarding client.Object, eventType, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(regarding, nil, eventType, reason, action, note, args...)
	}
}

// applier writes the children, as this Reconciler's field manager, events and metrics.
func (r *Reconciler) applier() *apply.Applier {
	return &apply.Applier{Client: r.Client, Writer: r.Applier, APIReader: r.APIReader,
		FieldManager: builders.FieldManager, OwnerKind: "NginxOperator", Event: r.event, CountWrite: countWrite}
}

// cluster is what the content tracker reads and writes through.
func (r *Reconciler) cluster() content.Cluster {
	return content.Cluster{Client: r.Client, APIReader: r.APIReader, Clock: r.Clock,
		ReloadState: r.ReloadState, Traffic: r.Traffic, Event: r.event, CountWrite: countWrite}
}
