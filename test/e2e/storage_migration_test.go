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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	svmv1beta1 "k8s.io/api/storagemigration/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

// TestStorageVersionMigration writes NginxOperators into etcd the way an earlier release
// stored them (v1alpha1, JSON), then has them rewritten at the current storage version
// (v1alpha2, protobuf) through kube-apiserver and the aggregator, the two ways
// docs/storage-migration.md describes: Kubernetes' own storage version migrator
// (kube-controller-manager's storage-version-migrator-controller, enabled by
// hack/local-up.sh), and the fallback without it, kubectl get | kubectl replace. Every
// object must end at the storage version with the content users see unchanged.
func TestStorageVersionMigration(t *testing.T) {
	t.Parallel()
	env := newMigrationEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	t.Run("StorageVersionMigration", func(t *testing.T) {
		batch := env.seed(ctx, t, "storage-migration")
		// As a user would: one StorageVersionMigration through kube-apiserver.
		svm := &svmv1beta1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "nginxoperators-to-storage-version"},
			Spec: svmv1beta1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "operator.example.com", Resource: "nginxoperators"}}}
		migrations := env.kube.StoragemigrationV1beta1().StorageVersionMigrations()
		started := time.Now()
		if _, err := migrations.Create(ctx, svm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The steps as first seen: kube-controller-manager marks the migration Running,
		// records the resourceVersion to migrate up to, then patches every object.
		var finished *svmv1beta1.StorageVersionMigration
		var running, checkpointed time.Duration
		waitFor(t, 5*time.Minute, "the StorageVersionMigration to succeed or fail", func() bool {
			got, err := migrations.Get(ctx, svm.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			if running == 0 && meta.IsStatusConditionTrue(got.Status.Conditions, string(svmv1beta1.MigrationRunning)) {
				running = time.Since(started)
			}
			if checkpointed == 0 && got.Status.ResourceVersion != "" {
				checkpointed = time.Since(started)
			}
			if meta.IsStatusConditionTrue(got.Status.Conditions, string(svmv1beta1.MigrationSucceeded)) ||
				meta.IsStatusConditionTrue(got.Status.Conditions, string(svmv1beta1.MigrationFailed)) {
				finished = got
			}
			return finished != nil
		})
		took := time.Since(started)
		if failed := meta.FindStatusCondition(finished.Status.Conditions, string(svmv1beta1.MigrationFailed)); failed != nil {
			t.Fatalf("the migration failed after %s: %s", framework.Describe(took), failed.Message)
		}
		migration := framework.Measure(t, "storage-version-migration")
		migration.Duration("created-to-succeeded", took, "a StorageVersionMigration from its creation to Succeeded, on a just-started cluster")
		migration.Duration("running-to-succeeded", took-running, "of that, from Running to Succeeded: the rest waits for kube-controller-manager's discovery refresh")
		migrated, encodingsAfter := env.checkRewritten(ctx, t, batch)
		t.Logf("storage version migration of %d seeded NginxOperators through kube-controller-manager's storage-version-migrator-controller: %d rewritten in %s from the StorageVersionMigration's creation to Succeeded (Running after %s, resourceVersion checkpoint %s recorded after %s); the object already at the storage version not rewritten; stored before: %s; after: %s",
			len(batch.before), migrated, framework.Describe(took), framework.Describe(running), finished.Status.ResourceVersion, framework.Describe(checkpointed), batch.encodingsBefore, encodingsAfter)
	})

	t.Run("KubectlReplace", func(t *testing.T) {
		batch := env.seed(ctx, t, "storage-rewrite")
		started := time.Now()
		list := env.kubectl.Must(t, "", "get", "nginxoperators.v1alpha2.operator.example.com", "-n", batch.namespace, "-o", "json")
		env.kubectl.Must(t, list, "replace", "-f", "-")
		took := time.Since(started)
		migrated, encodingsAfter := env.checkRewritten(ctx, t, batch)
		t.Logf("kubectl get -o json | kubectl replace -f - of %d seeded NginxOperators: %d rewritten in %s; the object already at the storage version not rewritten; stored before: %s; after: %s",
			len(batch.before), migrated, framework.Describe(took), batch.encodingsBefore, encodingsAfter)
	})
}

// migrationEnv is the test's own stack with its clients and a client of our
// apiserver's embedded etcd.
type migrationEnv struct {
	kube    kubernetes.Interface
	ops     clientset.Interface
	kubectl framework.Kubectl
	etcd    *clientv3.Client
}

func newMigrationEnv(t *testing.T) *migrationEnv {
	s := migrationStack(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	// Reading v1alpha1 is the point here; its deprecation warning on every read is not.
	cfg.WarningHandler = rest.NoWarnings{}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &migrationEnv{kube: kube, ops: ops, kubectl: framework.Kubectl{Kubeconfig: s.Kubeconfig()},
		etcd: embeddedEtcd(t, filepath.Join(s.LocalDir, "logs", "nginx-operator-apiserver.log"))}
}

// legacyBatch is one namespace of seeded objects, plus one object written through the
// API today, as the API served them and as etcd held them before the rewrite.
type legacyBatch struct {
	namespace, keyPrefix, current string
	seen                          map[string]seenObject
	before                        map[string][]byte
	encodingsBefore               string
}

const seededPerBatch = 40

// seed writes seededPerBatch legacy objects into etcd behind the apiserver's back (its
// watch cache learns of them through its etcd watch, like of any other write) and checks
// they read back through both versions with the content they were stored with.
func (e *migrationEnv) seed(ctx context.Context, t *testing.T, namespace string) *legacyBatch {
	t.Helper()
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The object written through the API gives the apiserver's key layout and shows what
	// a rewrite does to an object already at the storage version.
	v2 := e.ops.OperatorV1alpha2().NginxOperators(namespace)
	current, err := v2.Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "current"},
		Spec: v1alpha2.NginxOperatorSpec{Image: "nginx:1.27", Replicas: ptr.To[int32](2)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := &legacyBatch{namespace: namespace, current: current.Name, seen: map[string]seenObject{},
		keyPrefix: nginxOperatorKeyPrefix(t, e.etcd, namespace, current.Name)}
	for i := range seededPerBatch {
		obj := legacyNginxOperator(namespace, i)
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		key := b.keyPrefix + namespace + "/" + obj.Name
		resp, err := e.etcd.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).Then(clientv3.OpPut(key, string(data))).Commit()
		if err != nil || !resp.Succeeded {
			t.Fatalf("seeding %s: %v (key existed: %v)", key, err, err == nil)
		}
	}
	b.before = b.legacy(storedNginxOperators(t, e.etcd, b.keyPrefix, namespace))
	b.encodingsBefore = encodingCounts(t, b.before)
	if want := fmt.Sprintf("%d json operator.example.com/v1alpha1", seededPerBatch); b.encodingsBefore != want {
		t.Fatalf("seeded values: %s, want %s", b.encodingsBefore, want)
	}

	waitFor(t, 3*time.Minute, "the seeded objects to be listed through the API", func() bool {
		list, err := v2.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == seededPerBatch+1
	})
	for i := range seededPerBatch {
		want := legacyNginxOperator(namespace, i)
		got := e.read(ctx, t, namespace, want.Name)
		if got.uid != want.UID || !apiequality.Semantic.DeepEqual(got.v1.Spec, want.Spec) ||
			!apiequality.Semantic.DeepEqual(got.v1.Labels, want.Labels) || !apiequality.Semantic.DeepEqual(got.v1.Annotations, want.Annotations) {
			t.Fatalf("%s through v1alpha1: uid %s, labels %v, annotations %v, spec %+v; seeded uid %s, labels %v, annotations %v, spec %+v",
				want.Name, got.uid, got.v1.Labels, got.v1.Annotations, got.v1.Spec, want.UID, want.Labels, want.Annotations, want.Spec)
		}
		// v1alpha1's port is the Service's (its objects run the unprivileged image on 8080).
		if svc := got.v2.Spec.Service; svc == nil || len(svc.Ports) != 1 || svc.Ports[0].Port != *want.Spec.Port || *got.v2.Spec.Replicas != *want.Spec.Replicas {
			t.Fatalf("%s through v1alpha2: service %+v replicas %d, seeded port %d replicas %d", want.Name, svc, *got.v2.Spec.Replicas, *want.Spec.Port, *want.Spec.Replicas)
		}
		b.seen[want.Name] = got
	}
	b.seen[current.Name] = e.read(ctx, t, namespace, current.Name)
	if got := encodingCounts(t, b.legacy(storedNginxOperators(t, e.etcd, b.keyPrefix, namespace))); got != b.encodingsBefore {
		t.Fatalf("reading rewrote the stored objects: %s", got)
	}
	return b
}

// legacy drops the object written through the API from a namespace's stored values.
func (b *legacyBatch) legacy(values map[string][]byte) map[string][]byte {
	delete(values, b.keyPrefix+b.namespace+"/"+b.current)
	return values
}

// checkRewritten checks that every seeded value is now at the storage version with the
// content it had, that each seeded object has a new resourceVersion and that the object
// already at the storage version was left alone; it returns how many seeded values
// changed and the encodings now stored.
func (e *migrationEnv) checkRewritten(ctx context.Context, t *testing.T, b *legacyBatch) (int, string) {
	t.Helper()
	after := storedNginxOperators(t, e.etcd, b.keyPrefix, b.namespace)
	migrated := 0
	for key, value := range after {
		encoding, obj := storedEncoding(t, value)
		if encoding != "protobuf operator.example.com/v1alpha2" {
			t.Errorf("%s is stored as %s after the rewrite", key, encoding)
			continue
		}
		if _, seeded := b.before[key]; seeded && string(value) != string(b.before[key]) {
			migrated++
		}
		if stored := obj.(*v1alpha2.NginxOperator); !apiequality.Semantic.DeepEqual(stored.Spec, b.seen[stored.Name].v2.Spec) {
			t.Errorf("%s stored spec %+v, was %+v", stored.Name, stored.Spec, b.seen[stored.Name].v2.Spec)
		}
	}
	for name, was := range b.seen {
		now := e.read(ctx, t, b.namespace, name)
		if diff := was.visibleChanges(now); diff != "" {
			t.Errorf("%s changed through the rewrite: %s", name, diff)
		}
		rvBefore, _ := strconv.ParseInt(was.v2.ResourceVersion, 10, 64)
		rvAfter, _ := strconv.ParseInt(now.v2.ResourceVersion, 10, 64)
		switch {
		case name != b.current && rvAfter <= rvBefore:
			t.Errorf("%s: resourceVersion %d after the rewrite, %d before: not rewritten", name, rvAfter, rvBefore)
		// A no-op write of an object already at the storage version encodes to the bytes
		// etcd holds, so the apiserver writes nothing.
		case name == b.current && rvAfter != rvBefore:
			t.Errorf("%s, already at the storage version, was rewritten: resourceVersion %d -> %d", name, rvBefore, rvAfter)
		}
		if name == "legacy-00" || name == "legacy-01" {
			t.Logf("%s after the rewrite: managedFields %s", name, managers(now.v2.ManagedFields))
		}
	}
	if migrated != len(b.before) {
		t.Errorf("%d of %d seeded objects rewritten", migrated, len(b.before))
	}
	return migrated, encodingCounts(t, b.legacy(after))
}

// migrationStack starts a stack of the test's own, without our controller: the
// controller writes the status of every NginxOperator it sees, which would rewrite the
// seeded objects before the migrator got to them. The suite's shared stack keeps its
// controller.
func migrationStack(t *testing.T) *framework.Stack {
	t.Helper()
	s, err := framework.NewStack(repoRoot, "nginx-operator-svm-", "START_CONTROLLER=false")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			s.DumpLogs(40)
		}
		if out, err := s.Down(time.Minute); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
	start := time.Now()
	if err := s.Up(3, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("own control plane (no nginx-operator controller) up in %s", framework.Describe(time.Since(start)))
	return s
}

// nginxOperatorKeyPrefix finds the etcd key of an object the apiserver wrote and returns
// the part before "<namespace>/<name>".
func nginxOperatorKeyPrefix(t *testing.T, etcd *clientv3.Client, namespace, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := etcd.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	suffix := "/nginxoperators/" + namespace + "/" + name
	for _, kv := range resp.Kvs {
		if key := string(kv.Key); strings.HasSuffix(key, suffix) {
			return strings.TrimSuffix(key, namespace+"/"+name)
		}
	}
	t.Fatalf("no key ending in %s among %d keys", suffix, len(resp.Kvs))
	return ""
}

// legacyNginxOperator is the i-th seeded object as an earlier release stored it: in
// v1alpha1, with labels, annotations and a spec of its own; every other one carries
// the managedFields a client's update recorded, some a status.
func legacyNginxOperator(namespace string, i int) *v1alpha1.NginxOperator {
	name := fmt.Sprintf("legacy-%02d", i)
	created := metav1.NewTime(time.Date(2025, 3, 1, 12, 0, i, 0, time.UTC))
	obj := &v1alpha1.NginxOperator{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "NginxOperator"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(fmt.Sprintf("5eeded00-0000-4000-8000-%012d", i)), Generation: 1, CreationTimestamp: created,
			Labels:      map[string]string{"app": name, "tier": "web"},
			Annotations: map[string]string{"example.com/owner": fmt.Sprintf("team-%d", i%4)}},
		Spec: v1alpha1.NginxOperatorSpec{Port: ptr.To(int32(8000 + i)), Replicas: ptr.To(int32(i%3 + 1)), ForceRedploy: "seeded"},
	}
	if i%2 == 0 {
		obj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: v1alpha1.SchemeGroupVersion.String(), Time: &created, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(
				`{"f:metadata":{"f:annotations":{".":{},"f:example.com/owner":{}},"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{".":{},"f:forceRedploy":{},"f:port":{},"f:replicas":{}}}`)}}
	}
	if i%4 == 1 {
		obj.Status.Conditions = []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, ObservedGeneration: 1,
			LastTransitionTime: created, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."}}
	}
	return obj
}

// managers describes managedFields as "manager/operation/apiVersion" entries.
func managers(entries []metav1.ManagedFieldsEntry) string {
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprintf("%s/%s/%s", e.Manager, e.Operation, e.APIVersion))
	}
	return fmt.Sprint(out)
}

// seenObject is an object as the API served it in both versions.
type seenObject struct {
	uid types.UID
	v1  *v1alpha1.NginxOperator
	v2  *v1alpha2.NginxOperator
}

// read gets an object through both versions.
func (e *migrationEnv) read(ctx context.Context, t *testing.T, namespace, name string) seenObject {
	t.Helper()
	old, err := e.ops.OperatorV1alpha1().NginxOperators(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s through v1alpha1: %v", name, err)
	}
	cur, err := e.ops.OperatorV1alpha2().NginxOperators(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s through v1alpha2: %v", name, err)
	}
	if old.UID != cur.UID {
		t.Fatalf("%s: uid %s through v1alpha1, %s through v1alpha2", name, old.UID, cur.UID)
	}
	return seenObject{uid: cur.UID, v1: old, v2: cur}
}

// visibleChanges lists what users would see changed between two reads: name, uid,
// labels, annotations, spec and status in either version. resourceVersion and
// managedFields are the storage's own and may change.
func (was seenObject) visibleChanges(now seenObject) string {
	var diffs []string
	for _, c := range []struct {
		what       string
		before, at any
	}{
		{"name", was.v2.Name, now.v2.Name},
		{"uid", was.uid, now.uid},
		{"creationTimestamp", was.v2.CreationTimestamp, now.v2.CreationTimestamp},
		{"generation", was.v2.Generation, now.v2.Generation},
		{"labels", was.v2.Labels, now.v2.Labels},
		{"annotations (v1alpha2)", was.v2.Annotations, now.v2.Annotations},
		{"annotations (v1alpha1)", was.v1.Annotations, now.v1.Annotations},
		{"spec (v1alpha2)", was.v2.Spec, now.v2.Spec},
		{"spec (v1alpha1)", was.v1.Spec, now.v1.Spec},
		{"status (v1alpha2)", was.v2.Status, now.v2.Status},
		{"status (v1alpha1)", was.v1.Status, now.v1.Status},
	} {
		if !apiequality.Semantic.DeepEqual(c.before, c.at) {
			diffs = append(diffs, fmt.Sprintf("%s %+v -> %+v", c.what, c.before, c.at))
		}
	}
	return strings.Join(diffs, "; ")
}
