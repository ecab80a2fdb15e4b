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

package faults

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// TestTwoReplicasOnOneEtcd runs two apiserver processes on one external etcd, each
// with its own data directory and so its own CA: what is written through one is read
// and watched through the other, and when one is SIGKILLed during load, the clients
// of the other see no error.
func TestTwoReplicasOnOneEtcd(t *testing.T) {
	etcd := startEtcd(t)
	a := startAPIServer(t, t.TempDir(), "--etcd-servers", etcd.clientURL())
	b := startAPIServer(t, t.TempDir(), "--etcd-servers", etcd.clientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	throughA := a.Client.OperatorV1alpha2().NginxOperators(ns)
	throughB := b.Client.OperatorV1alpha2().NginxOperators(ns)

	t.Run("a write through either is read through the other", func(t *testing.T) {
		for _, tc := range []struct {
			name          string
			write, read   *apiserver
			writer, other string
		}{{"from-a", a, b, "A", "B"}, {"from-b", b, a, "B", "A"}} {
			created, err := tc.write.Client.OperatorV1alpha2().NginxOperators(ns).Create(ctx,
				&v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: tc.name}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create through %s: %v", tc.writer, err)
			}
			read, err := tc.read.Client.OperatorV1alpha2().NginxOperators(ns).Get(ctx, tc.name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("created through %s, get through %s: %v", tc.writer, tc.other, err)
			}
			if read.UID != created.UID || read.ResourceVersion != created.ResourceVersion {
				t.Errorf("created through %s uid %s rv %s, read through %s uid %s rv %s",
					tc.writer, created.UID, created.ResourceVersion, tc.other, read.UID, read.ResourceVersion)
			}
		}
	})

	t.Run("a watch through B sees an update through A", func(t *testing.T) {
		created, err := throughA.Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "watched"},
			Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr.To[int32](1)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := throughB.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion,
			FieldSelector: fields.OneTermEqualSelector("metadata.name", "watched").String()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		created.Spec.Replicas = ptr.To[int32](7)
		if _, err := throughA.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		updated := time.Now()
		timeout := time.After(time.Minute)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch through B closed before the update through A arrived")
				}
				obj, isOperator := ev.Object.(*v1alpha2.NginxOperator)
				if ev.Type != watch.Modified || !isOperator {
					t.Fatalf("watch through B: %s %T, want MODIFIED NginxOperator", ev.Type, ev.Object)
				}
				if got := ptr.Deref(obj.Spec.Replicas, 0); got != 7 {
					t.Fatalf("watch through B: MODIFIED with spec.replicas %d, want 7 as updated through A", got)
				}
				t.Logf("watch through B saw the update through A (spec.replicas 1 -> 7) %s after it was acknowledged", time.Since(updated).Round(time.Microsecond))
				return
			case <-timeout:
				t.Fatal("watch through B did not see the update through A within a minute")
			}
		}
	})

	t.Run("A killed during load: no errors through B", func(t *testing.T) {
		loadA := startCreateLoad(t, throughA, "replica-a", 4, true)
		loadB := startCreateLoad(t, throughB, "replica-b", 8, true)
		loadA.waitAcked(100, 3*time.Minute)
		loadB.waitAcked(100, 3*time.Minute)

		loadB.setPhase("A killed")
		pid := a.PID()
		a.kill()
		loadB.waitAcked(loadB.ackedCount()+300, 3*time.Minute)
		loadA.stop()
		loadB.stop()

		requests, failed := loadB.requests()
		checkA, checkB := loadA.check(ctx, throughB), loadB.check(ctx, throughB)
		t.Logf("replica A (pid %d) SIGKILLed during load through both: through B %d requests, %d errors (%s); A's creates read through B: %s; B's: %s",
			pid, requests, failed, loadB.outcomeSummary(), checkA, checkB)
		m := framework.Measure(t, "two-replicas-one-killed")
		m.Count("requests-through-the-other", requests, "requests", "requests through the replica left while the other was killed")
		m.Count("errors-through-the-other", failed, "requests", "of those, failed")
		if failed > 0 {
			t.Errorf("%d of %d requests through B failed while A was killed: %s", failed, requests, loadB.errorSamples())
		}
		checkA.assertNothingLost(t)
		checkB.assertNothingLost(t)
	})
}
