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

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// followUpPriority ranks a reconcile woken by a change to what an NginxOperator runs
// (its Deployment, Service, PodDisruptionBudget or pods) above one woken by a new or
// changed NginxOperator, which has priority 0. Reporting what already runs then does
// not wait behind every NginxOperator created after it: when thousands arrive at once,
// each shows Available as soon as its Deployment is, not after the last one's first
// reconcile. New NginxOperators still progress: each follow-up is one reconcile of an
// object whose children changed, and children change because earlier reconciles ran.
// Events from the informers' initial lists and resyncs keep controller-runtime's low
// priority.
const followUpPriority = 1

// followUp enqueues what h enqueues at followUpPriority.
func followUp(h handler.EventHandler) handler.EventHandler {
	return prioritized{inner: h, priority: followUpPriority}
}

type prioritized struct {
	inner    handler.EventHandler
	priority int
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (p prioritized) Create(ctx context.Context, e event.CreateEvent, q queue) {
	p.inner.Create(ctx, e, p.raise(q))
}

func (p prioritized) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	p.inner.Update(ctx, e, p.raise(q))
}

func (p prioritized) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	p.inner.Delete(ctx, e, p.raise(q))
}

func (p prioritized) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	p.inner.Generic(ctx, e, p.raise(q))
}

// raise makes priority the default of a priority queue; any other queue has none.
func (p prioritized) raise(q queue) queue {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		return q
	}
	return defaultPriority{PriorityQueue: pq, priority: p.priority}
}

// defaultPriority adds at priority unless the caller sets one, as controller-runtime's
// handlers do to lower the initial list's and resyncs' events.
type defaultPriority struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	priority int
}

func (q defaultPriority) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (q defaultPriority) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (q defaultPriority) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

func (q defaultPriority) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = &q.priority
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}
