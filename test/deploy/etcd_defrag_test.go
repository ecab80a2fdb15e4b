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

package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// etcdDefragCronJob runs the defragmentation CronJob of artifacts/deploy once, after the
// earlier tests' writes and the apiserver's compactions: every member's file shrinks to
// about what is in use. When no member's file holds more than a MiB beyond what is in use
// (a system just deployed, as when the test runs alone), it frees some first.
func etcdDefragCronJob(t *testing.T) {
	pods := []string{etcdStatefulSet + "-0", etcdStatefulSet + "-1", etcdStatefulSet + "-2"}
	const slack = 1 << 20
	statuses := func() map[string]memberStatus {
		now := map[string]memberStatus{}
		for _, p := range pods {
			st, err := etcdStatus(t, p)
			if err != nil {
				t.Fatal(err)
			}
			now[p] = st
		}
		return now
	}
	somethingToReturn := func(members map[string]memberStatus) bool {
		for _, st := range members {
			if st.Status.DBSize > st.Status.DBSizeInUse+slack {
				return true
			}
		}
		return false
	}
	before := statuses()
	if !somethingToReturn(before) {
		freeSpace(t, pods[0])
		waitFor(t, time.Minute, "a member's file to hold more than 1 MiB beyond what is in use", func() bool {
			before = statuses()
			return somethingToReturn(before)
		})
	}
	logs, took := runJobFromCronJob(t, "nginx-operator-etcd-defrag", "defrag-now")
	t.Logf("the defragmentation job completed in %s:\n%s", took.Round(100*time.Millisecond), strings.TrimSpace(logs))
	for _, p := range pods {
		after, err := etcdStatus(t, p)
		if err != nil {
			t.Fatal(err)
		}
		b, a := before[p].Status, after.Status
		t.Logf("%s: file %s → %s (in use %s → %s)", p, mib(b.DBSize), mib(a.DBSize), mib(b.DBSizeInUse), mib(a.DBSizeInUse))
		if a.DBSize > a.DBSizeInUse+slack {
			t.Errorf("%s: after the defragmentation the file is %d bytes with %d in use", p, a.DBSize, a.DBSizeInUse)
		}
	}
}

// freeSpace writes history and compacts it away, as other tests' writes and the
// apiserver's compactor (every five minutes) do: an NginxOperator rewritten twenty times
// with a 200 KiB annotation and deleted, then every revision before the latest compacted,
// asked of the member in pod.
func freeSpace(t *testing.T, pod string) {
	const ns, name, rewrites = "defrag", "rewritten", 20
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	nos := operatorClient(t).OperatorV1alpha2().NginxOperators(ns)
	ctx := context.Background()
	if _, err := nos.Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0))}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	padding := strings.Repeat("x", 200<<10)
	for i := range rewrites {
		// The controller writes the object's status meanwhile: a conflict is read again.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			o, err := nos.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			o.Annotations = map[string]string{"padding": fmt.Sprint(i) + padding}
			_, err = nos.Update(ctx, o, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nos.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := etcdStatus(t, pod)
	if err != nil {
		t.Fatal(err)
	}
	// etcdctl runs again an exec that kubectl lost: then the first run has compacted.
	if _, err := etcdctl(t, pod, "compact", fmt.Sprint(st.Status.Header.Revision)); err != nil && !strings.Contains(err.Error(), "required revision has been compacted") {
		t.Fatal(err)
	}
	t.Logf("no member's file held more than 1 MiB beyond what is in use: rewrote an NginxOperator %d times with a 200 KiB annotation, deleted it and compacted at revision %d",
		rewrites, st.Status.Header.Revision)
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
