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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// byName enqueues the object's own name.
var byName = handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
})

func pod(name, resourceVersion string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: resourceVersion}}
}

func TestFollowUpsComeBeforeNewObjects(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	byName.Create(ctx, event.CreateEvent{Object: pod("created-first", "1")}, q)
	byName.Create(ctx, event.CreateEvent{Object: pod("created-second", "2")}, q)
	followUp(byName).Update(ctx, event.UpdateEvent{ObjectOld: pod("running", "3"), ObjectNew: pod("running", "4")}, q)

	for _, want := range []struct {
		name     string
		priority int
	}{{"running", followUpPriority}, {"created-first", 0}, {"created-second", 0}} {
		item, priority, _ := q.GetWithPriority()
		if item.Name != want.name || priority != want.priority {
			t.Errorf("got %s at priority %d, want %s at %d", item.Name, priority, want.name, want.priority)
		}
		q.Done(item)
	}
}

func TestFollowUpsKeepLowPriorityForInitialListsAndResyncs(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	followUp(byName).Create(ctx, event.CreateEvent{Object: pod("listed", "1"), IsInInitialList: true}, q)
	followUp(byName).Update(ctx, event.UpdateEvent{ObjectOld: pod("resynced", "2"), ObjectNew: pod("resynced", "2")}, q)
	for range 2 {
		item, priority, _ := q.GetWithPriority()
		if priority != handler.LowPriority {
			t.Errorf("%s at priority %d, want controller-runtime's low priority %d", item.Name, priority, handler.LowPriority)
		}
		q.Done(item)
	}
}
