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
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// TestEtcdStaysBoundedUnderStatusUpdates writes 100 objects × 200 status updates through
// the apiserver into an external etcd. The apiserver compacts etcd's history
// (--etcd-compaction-interval; 10s here instead of the default 5m, so the test sees several
// compactions) and a defragmentation (what the CronJob nginx-operator-etcd-defrag runs)
// returns the freed pages: the database ends near the size of the live objects, not of
// the 20,000 revisions written (about 60 MB of history uncompacted, against the 2 MiB the
// check allows), and every object holds its last status.
func TestEtcdStaysBoundedUnderStatusUpdates(t *testing.T) {
	const objects, updates, workers = 100, 200, 20
	const interval = 10 * time.Second
	etcd := startEtcd(t)
	s := startAPIServer(t, t.TempDir(), "--etcd-servers", etcd.clientURL(), "--etcd-compaction-interval", interval.String())
	nos := s.Client.OperatorV1alpha2().NginxOperators(ns)
	ctx := context.Background()
	current := make([]*v1alpha2.NginxOperator, objects)
	for i := range current {
		obj, err := nos.Create(ctx, typicalObject(fmt.Sprintf("bounded-%d", i)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		current[i] = obj
	}
	created := etcd.size()
	t.Logf("%d objects created: %s", objects, created)

	// Sample the database while the updates run.
	var peak etcdSize
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Second):
			}
			if now := etcd.size(); now.Size > peak.Size {
				peak = now
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for round := 1; round <= updates; round++ {
				for i := w; i < objects; i += workers {
					obj := current[i].DeepCopy()
					setTypicalStatus(obj, round)
					updated, err := nos.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
					if err != nil {
						errs <- fmt.Errorf("status update %d of %s: %w", round, obj.Name, err)
						return
					}
					current[i] = updated
				}
			}
		}(w)
	}
	wg.Wait()
	close(done)
	<-sampled
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	took := time.Since(start)
	written := etcd.size()
	t.Logf("%d status updates in %s (%.0f/s); peak while writing: %s; at the end: %s",
		objects*updates, took.Round(time.Second), float64(objects*updates)/took.Seconds(), peak, written)

	// The compactor compacts up to the revision it saw one interval earlier: within two
	// intervals of the last write, etcd has compacted through it.
	var compactRev float64
	d := framework.WaitFor(t, 2*interval+time.Minute, fmt.Sprintf("the apiserver to compact etcd through revision %d", written.Revision), func() bool {
		compactRev = etcd.metric("etcd_debugging_mvcc_compact_revision")
		return compactRev >= float64(written.Revision)
	})
	t.Logf("etcd compacted through revision %.0f %s after the last write", compactRev, framework.Describe(d))
	// etcd deletes the compacted revisions in the background. A physical compaction at a
	// revision already compacted is refused, but only after etcd has finished the
	// compactions before it and committed them: a barrier, which compacts nothing itself.
	if _, err := etcd.tryEtcdctl("compact", fmt.Sprint(written.Revision), "--physical"); err == nil || !strings.Contains(err.Error(), "required revision has been compacted") {
		t.Fatalf("etcdctl compact %d --physical after the apiserver compacted through %.0f: %v, want refused as compacted", written.Revision, compactRev, err)
	}
	compacted := etcd.size()
	etcd.etcdctl("defrag")
	defragmented := etcd.size()
	t.Logf("after the apiserver's compaction: %s; after defragmentation: %s", compacted, defragmented)
	t.Logf("database file after defragmentation %.1fx its size with the objects just created, %.1f%% of its peak",
		float64(defragmented.Size)/float64(created.Size), 100*float64(defragmented.Size)/float64(max(peak.Size, written.Size)))
	m := framework.Measure(t, "etcd-growth-under-status-updates")
	m.Count("status-updates", objects*updates, "updates", fmt.Sprintf("status updates written (%d objects × %d)", objects, updates))
	m.Value("update-rate", float64(objects*updates)/took.Seconds(), "/s", "status updates a second")
	m.Value("peak-file", mib(max(peak.Size, written.Size)), "MiB", "etcd's database file at its peak while writing")
	m.Value("in-use-after-compaction", mib(compacted.InUse), "MiB", "what the file holds once the apiserver compacted the history")
	m.Value("file-after-defragmentation", mib(defragmented.Size), "MiB", "the file after a defragmentation")

	// Bounded: what stays is the live objects (a few KiB each, plus bbolt's pages), not the
	// history; the file shrinks to what is in use.
	const slack = 2 << 20
	if compacted.InUse > 2*created.InUse+slack {
		t.Errorf("in use after compaction %d bytes, more than twice the %d bytes after the creates (+2 MiB): the history was not compacted", compacted.InUse, created.InUse)
	}
	if defragmented.Size > compacted.InUse+slack {
		t.Errorf("file after defragmentation %d bytes, more than the %d bytes in use (+2 MiB)", defragmented.Size, compacted.InUse)
	}
	list, err := nos.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Items {
		if o.Status.RealQPS == nil || *o.Status.RealQPS != updates {
			t.Errorf("%s: status.realQPS %v after the last update wrote %d", o.Name, o.Status.RealQPS, updates)
		}
	}
	if len(list.Items) != objects {
		t.Errorf("%d objects, want %d", len(list.Items), objects)
	}
}

// TestEtcdSizing measures what an NginxOperator with a typical spec and status takes in
// etcd, for docs/operations.md's sizing: 3000 objects, their history compacted and the
// database defragmented, against the empty database.
func TestEtcdSizing(t *testing.T) {
	const objects = 3000
	etcd := startEtcd(t)
	s := startAPIServer(t, t.TempDir(), "--etcd-servers", etcd.clientURL())
	nos := s.Client.OperatorV1alpha2().NginxOperators(ns)
	ctx := context.Background()
	empty := etcd.size()
	for i := 0; i < objects; i++ {
		obj, err := nos.Create(ctx, typicalObject(fmt.Sprintf("sized-%d", i)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setTypicalStatus(obj, 1)
		if _, err := nos.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	etcd.etcdctl("compact", fmt.Sprint(etcd.size().Revision))
	etcd.etcdctl("defrag")
	full := etcd.size()
	// The quota counts the file, free pages included.
	perObject := float64(full.Size-empty.Size) / objects
	t.Logf("%d objects: %s (empty: %s); %.0f bytes per object, about %.0f objects per GiB of quota (%.0f in the 512 MiB of artifacts/deploy)",
		objects, full, empty, perObject, (1<<30)/perObject, (512<<20)/perObject)
	m := framework.Measure(t, "etcd-sizing")
	m.Value("per-object", perObject/1024, "KiB", fmt.Sprintf("etcd's file per NginxOperator with a typical spec and status (%d objects, compacted and defragmented)", objects))
	m.Value("objects-in-512-mib", float64(int((512<<20)/perObject)), "objects", "such objects in the 512 MiB quota of artifacts/deploy")
	if perObject <= 0 || perObject > 64<<10 {
		t.Errorf("%.0f bytes per object is not a plausible size", perObject)
	}
}

// mib is bytes in MiB, for figures.
func mib(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// typicalObject is an NginxOperator as users write them: an image, a port, a Service.
func typicalObject(name string) *v1alpha2.NginxOperator {
	return &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr.To(int32(0)), Image: "registry.example.com/nginx:1.27",
			Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Service: &v1alpha2.ServiceSpec{Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}}}}
}

// setTypicalStatus writes what the controller reports: counts, the selector and two
// conditions; round makes each write differ.
func setTypicalStatus(obj *v1alpha2.NginxOperator, round int) {
	obj.Status.RealQPS = ptr.To(int64(round))
	obj.Status.ObservedGeneration = obj.Generation
	obj.Status.Selector = "app.kubernetes.io/instance=" + obj.Name
	obj.Status.Conditions = []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: fmt.Sprintf("round %d", round), LastTransitionTime: metav1.Now(), ObservedGeneration: obj.Generation},
		{Type: "OperatorDegraded", Status: metav1.ConditionFalse, Reason: "OperandsApplied", Message: "the Deployment and the Service are as specified", LastTransitionTime: metav1.Now(), ObservedGeneration: obj.Generation},
	}
}

// TestEtcdNoSpaceRecovery fills a deliberately small etcd quota with updates whose history
// is not compacted until etcd raises NOSPACE: writes then fail at once with a clear error,
// reads keep working, and the recovery of docs/operations.md (compact, defragment, disarm)
// brings writes back with every acknowledged value in place.
func TestEtcdNoSpaceRecovery(t *testing.T) {
	const objects = 20
	etcd := startEtcd(t, "--quota-backend-bytes", fmt.Sprint(16<<20))
	// No compaction by the apiserver: the history of the updates fills the quota.
	s := startAPIServer(t, t.TempDir(), "--etcd-servers", etcd.clientURL(), "--etcd-compaction-interval", "0")
	nos := s.Client.OperatorV1alpha2().NginxOperators(ns)
	ctx := context.Background()
	for i := 0; i < objects; i++ {
		if _, err := nos.Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("full-%d", i)},
			Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr.To(int32(0))}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// 100 KiB annotations, a new value each time: every update adds 100 KiB of history.
	fill := func(i, round int) string { return fmt.Sprintf("%d-%d-", i, round) + strings.Repeat("x", 100<<10) }
	acked := map[string]string{}
	update := func(name, value string) (time.Duration, error) {
		start := time.Now()
		reqCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		obj, err := nos.Get(reqCtx, name, metav1.GetOptions{})
		if err != nil {
			return time.Since(start), err
		}
		obj.Annotations = map[string]string{"example.com/fill": value}
		_, err = nos.Update(reqCtx, obj, metav1.UpdateOptions{})
		return time.Since(start), err
	}
	var refused error
	var refusedAfter time.Duration
	var refusedName, refusedValue string
	updates := 0
	for round := 0; refused == nil && round < 100; round++ {
		for i := 0; i < objects; i++ {
			name, value := fmt.Sprintf("full-%d", i), fill(i, round)
			took, err := update(name, value)
			if err != nil {
				refused, refusedAfter, refusedName, refusedValue = err, took, name, value
				break
			}
			acked[name] = value
			updates++
		}
	}
	if refused == nil {
		t.Fatalf("%d updates of 100 KiB and etcd never refused one", updates)
	}
	full := etcd.size()
	code := int32(0)
	if status, ok := refused.(apierrors.APIStatus); ok {
		code = status.Status().Code
	}
	t.Logf("after %d acknowledged updates (%s) the next was refused in %s: %d %v", updates, full, refusedAfter.Round(time.Millisecond), code, refused)
	m := framework.Measure(t, "etcd-nospace")
	m.Count("updates-before-nospace", updates, "updates", "updates of 100 KiB acknowledged before etcd's 16 MiB quota refused the next")
	m.Millis("first-refusal", refusedAfter, "the refused update answered in")
	if !strings.Contains(refused.Error(), "database space exceeded") {
		t.Errorf("the refusal does not say the database is full: %v", refused)
	}
	alarms := etcd.etcdctl("alarm", "list")
	t.Logf("etcdctl alarm list: %s", strings.TrimSpace(alarms))
	if !strings.Contains(alarms, "NOSPACE") {
		t.Errorf("no NOSPACE alarm: %q", alarms)
	}
	// Creates and updates are refused at once; reads work, and so do deletes, which etcd
	// lets through under NOSPACE because they free space.
	start := time.Now()
	_, err := nos.Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "one-more"},
		Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr.To(int32(0))}}, metav1.CreateOptions{})
	m.Millis("create-refused", time.Since(start), "a create while NOSPACE answered in")
	t.Logf("a create while NOSPACE: %v in %s", err, time.Since(start).Round(time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "database space exceeded") {
		t.Errorf("a create while NOSPACE answered %v, want the database-space error", err)
	}
	if took, err := update("full-1", "refused"); err == nil || !strings.Contains(err.Error(), "database space exceeded") {
		t.Errorf("an update while NOSPACE answered %v, want the database-space error", err)
	} else {
		m.Millis("update-refused", took, "an update while NOSPACE answered in")
		t.Logf("an update while NOSPACE: %v in %s", err, took.Round(time.Millisecond))
	}
	if list, err := nos.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != objects {
		t.Errorf("LIST while NOSPACE: %v (%d objects)", err, len(list.Items))
	}
	if _, err := nos.Get(ctx, "full-1", metav1.GetOptions{}); err != nil {
		t.Errorf("GET while NOSPACE: %v", err)
	}
	if err := nos.Delete(ctx, "full-0", metav1.DeleteOptions{}); err != nil {
		t.Errorf("DELETE while NOSPACE: %v", err)
	}
	delete(acked, "full-0")

	// The recovery of docs/operations.md, "Recovering from NOSPACE".
	etcd.etcdctl("compact", fmt.Sprint(full.Revision))
	etcd.etcdctl("defrag")
	etcd.etcdctl("alarm", "disarm")
	recovered := etcd.size()
	t.Logf("after compact, defrag and disarm: %s", recovered)
	if alarms := strings.TrimSpace(etcd.etcdctl("alarm", "list")); alarms != "" {
		t.Errorf("alarms after the disarm: %q", alarms)
	}
	if _, err := update("full-1", "after-recovery"); err != nil {
		t.Fatalf("a write after the recovery: %v", err)
	}
	acked["full-1"] = "after-recovery"
	list, err := nos.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The write that raised the alarm may be in etcd all the same: etcd applies a
	// transaction that goes over the quota and answers NOSPACE for it (its quota applier),
	// unless its check before proposing refused it first. A 500 leaves the outcome open;
	// only acknowledged values must be there.
	for _, o := range list.Items {
		got := o.Annotations["example.com/fill"]
		switch {
		case got == acked[o.Name]:
		case o.Name == refusedName && got == refusedValue:
			t.Logf("%s holds the write that raised the alarm: etcd applied it and answered NOSPACE", o.Name)
		default:
			t.Errorf("%s holds %.20q…, the last acknowledged write was %.20q…", o.Name, got, acked[o.Name])
		}
	}
	if len(list.Items) != len(acked) {
		t.Errorf("%d objects after the recovery, want %d", len(list.Items), len(acked))
	}
	t.Logf("%d objects, each with its last acknowledged value", len(list.Items))
}
