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
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// etcdBackupRestores takes a snapshot with the backup CronJob's job, destroys every
// member's data and restores the snapshot with hack/etcd-restore.sh: every object is back
// with its uid, spec and status, the object created after the snapshot is gone with its
// Deployment and Service, and the controller owns exactly one Deployment and Service per
// object again.
func etcdBackupRestores(t *testing.T) {
	const ns = "restored"
	client := operatorClient(t)
	nos := client.OperatorV1alpha2().NginxOperators(ns)
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--timeout=3m") })
	const objects = 10
	for i := 0; i < objects; i++ {
		obj := &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kept-%d", i)},
			Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0)), ForceRedeploy: fmt.Sprint(i)}}
		if _, err := nos.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The controller has written every status it will write before the snapshot: its first
	// status says the rollout is in progress, and a later one that the object is Available;
	// after that it writes nothing, so the list below is what the snapshot holds.
	settled := func() bool {
		list, err := nos.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, o := range list.Items {
			if o.Status.ObservedGeneration != o.Generation || !apimeta.IsStatusConditionTrue(o.Status.Conditions, "Available") {
				return false
			}
		}
		return len(list.Items) == objects
	}
	waitFor(t, 2*time.Minute, "the controller to report every object Available", settled)
	before, err := nos.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A backup now, as the CronJob takes one.
	logs, _ := runJobFromCronJob(t, "nginx-operator-etcd-backup", "backup-now")
	m := regexp.MustCompile(`"path":"([^"]+)".*"revision":(\d+).*"bytes":(\d+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("the backup job did not report a snapshot:\n%s", logs)
	}
	snapshot := path.Base(m[1])
	t.Logf("backup job saved %s: revision %s, %s bytes", snapshot, m[2], m[3])

	// Created after the snapshot: the restore loses it, and the garbage collector its dependents.
	if _, err := nos.Create(context.Background(), &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "after-snapshot"},
		Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0))}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the Deployment of the object created after the snapshot", func() bool {
		return get(t, "get", "deployment", "-n", ns, "after-snapshot", "--ignore-not-found", "-o", "name") != ""
	})

	stop := make(chan struct{})
	provided := make(chan int)
	volumes := []localVolume{memberVolume(0), memberVolume(1), memberVolume(2)}
	go func() { provided <- provisionEmptyVolumes(t, volumes, stop) }()
	start := time.Now()
	out, err := userScript(t, 20*time.Minute, "etcd-restore.sh", snapshot)
	close(stop)
	restore := framework.Measure(t, "etcd-restore")
	restore.Duration("restore", time.Since(start), "hack/etcd-restore.sh restored the backup CronJob's snapshot into three new volumes")
	t.Logf("hack/etcd-restore.sh %s (%s):\n%s", snapshot, time.Since(start).Round(100*time.Millisecond), out)
	t.Logf("the stand-in provisioner made %d empty volumes", <-provided)
	if err != nil {
		t.Fatalf("hack/etcd-restore.sh: %v", err)
	}
	waitForEtcdMembers(t, 3*time.Minute)
	waitFor(t, 3*time.Minute, "the APIServices Available", func() bool {
		return get(t, "get", "apiservice", "v1alpha1.operator.example.com", "v1alpha2.operator.example.com",
			"-o", `jsonpath={.items[*].status.conditions[?(@.type=="Available")].status}`) == "True True"
	})

	after, err := nos.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restored := map[string]v1alpha2.NginxOperator{}
	for _, o := range after.Items {
		restored[o.Name] = o
	}
	if _, ok := restored["after-snapshot"]; ok {
		t.Error("the object created after the snapshot survived the restore")
	}
	for _, o := range before.Items {
		r, ok := restored[o.Name]
		switch {
		case !ok:
			t.Errorf("%s is not restored", o.Name)
		case r.UID != o.UID:
			t.Errorf("%s came back with uid %s, was %s", o.Name, r.UID, o.UID)
		case !apiequality.Semantic.DeepEqual(r.Spec, o.Spec):
			t.Errorf("%s came back with spec %s, was %s", o.Name, jsonOf(r.Spec), jsonOf(o.Spec))
		case !apiequality.Semantic.DeepEqual(r.Status, o.Status):
			t.Errorf("%s came back with status %s, was %s", o.Name, jsonOf(r.Status), jsonOf(o.Status))
		}
	}
	t.Logf("%d objects before the snapshot, %d after the restore; resourceVersion %s → %s",
		len(before.Items), len(after.Items), before.ResourceVersion, after.ResourceVersion)

	// The controller reconverges: one Deployment and one Service per object, owned by it;
	// the garbage collector deleted the lost object's.
	owners := map[string]string{}
	for _, o := range before.Items {
		owners[o.Name] = string(o.UID)
	}
	d := waitFor(t, 3*time.Minute, "one Deployment and one Service per restored object, none for the lost one", func() bool {
		for _, kind := range []string{"deployments", "services"} {
			out := get(t, "get", kind, "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.name}={.metadata.ownerReferences[0].uid}{"\n"}{end}`)
			seen := map[string]string{}
			for _, line := range strings.Fields(out) {
				name, uid, _ := strings.Cut(line, "=")
				seen[name] = uid
			}
			if len(seen) != len(owners) {
				return false
			}
			for name, uid := range owners {
				if seen[name] != uid {
					return false
				}
			}
		}
		return true
	})
	restore.Duration("reconverged", d, "one Deployment and one Service per restored object, after the restore")
	t.Logf("controller reconverged %s after the restore: %d Deployments and Services, each owned by its restored object", d.Round(100*time.Millisecond), len(owners))
	if _, err := nos.Create(context.Background(), &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "after-restore"},
		Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0))}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a write after the restore: %v", err)
	}
}

func jsonOf(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
