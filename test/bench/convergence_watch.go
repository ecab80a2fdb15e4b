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

package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	opinformers "github.com/example/nginx-operator/pkg/generated/informers/externalversions"
)

// convergenceWatch follows every NginxOperator of the stack through an informer and
// keeps which have converged as events arrive: recounting ten thousand objects on every
// event would take the benchmark's own CPU from the cluster it measures. Their children
// are checked once, at the end (checkChildren).
type convergenceWatch struct {
	changed chan struct{}
	cancel  context.CancelFunc

	mu        sync.Mutex
	state     map[string]bool // namespace/name → converged
	converged int             // how many of state are true
}

func (s *convergenceStack) watchNginxOperators(ctx context.Context) (*convergenceWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &convergenceWatch{changed: make(chan struct{}, 1), cancel: cancel, state: map[string]bool{}}
	factory := opinformers.NewSharedInformerFactory(s.operator, 0)
	nos := factory.Operator().V1alpha2().NginxOperators()
	if _, err := nos.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, false) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
		DeleteFunc: func(obj any) { w.observe(obj, true) },
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nos.Informer().HasSynced) {
		cancel()
		return nil, errors.New("the NginxOperator informer did not sync")
	}
	return w, nil
}

// observe records one event and wakes the waiter.
func (w *convergenceWatch) observe(obj any, deleted bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	no, ok := obj.(*v1alpha2.NginxOperator)
	if !ok {
		return
	}
	key := no.Namespace + "/" + no.Name
	w.mu.Lock()
	if w.state[key] {
		w.converged--
	}
	if deleted {
		delete(w.state, key)
	} else {
		w.state[key] = isConverged(no)
		if w.state[key] {
			w.converged++
		}
	}
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *convergenceWatch) stop() { w.cancel() }

// convergedCount counts the NginxOperators that are Available and rolled out
// (Progressing False) at their current generation, and all it sees.
func (w *convergenceWatch) convergedCount() (converged, all int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.converged, len(w.state)
}

func isConverged(no *v1alpha2.NginxOperator) bool {
	return apimeta.IsStatusConditionTrue(no.Status.Conditions, v1alpha2.ConditionAvailable) &&
		apimeta.IsStatusConditionFalse(no.Status.Conditions, v1alpha2.ConditionProgressing) &&
		no.Status.ObservedGeneration == no.Generation
}

// keys are the namespace/name of every NginxOperator the watch holds.
func (w *convergenceWatch) keys() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Collect(maps.Keys(w.state))
}

func (w *convergenceWatch) notConverged() int {
	converged, all := w.convergedCount()
	return all - converged
}

// waitConverged returns once n NginxOperators have converged, logging progress every
// ten seconds.
func (w *convergenceWatch) waitConverged(ctx context.Context, n int, start time.Time, logf func(string, ...any)) error {
	ctx, cancel := context.WithTimeout(ctx, convergenceTimeout)
	defer cancel()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	for {
		converged, all := w.convergedCount()
		if converged >= n {
			return nil
		}
		select {
		case <-w.changed:
		case <-progress.C:
			logf("convergence: %d of %d converged after %s", converged, all, time.Since(start).Round(time.Second))
		case <-ctx.Done():
			return fmt.Errorf("%d of %d NginxOperators converged in %s: %w", converged, n, time.Since(start).Round(time.Second), ctx.Err())
		}
	}
}
