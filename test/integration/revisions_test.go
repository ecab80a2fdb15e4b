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

package integration

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	v1alpha2client "github.com/example/nginx-operator/pkg/generated/clientset/versioned/typed/operator/v1alpha2"
)

func inlineConfig(text string) *v1alpha2.ConfigSource {
	return &v1alpha2.ConfigSource{Inline: "events {}\nhttp { server { listen 8080; location / { return 200 '" + text + "'; } } }\n"}
}

// revisionsOf lists the NginxOperator's revisions by their label, ordered by number.
func revisionsOf(ctx context.Context, t *testing.T, s *server, ns, name string) []v1alpha2.NginxOperatorRevision {
	t.Helper()
	list, err := s.Client.OperatorV1alpha2().NginxOperatorRevisions(ns).List(ctx, metav1.ListOptions{LabelSelector: "operator.example.com/nginxoperator=" + name})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Revision < list.Items[j].Revision })
	return list.Items
}

func numbers(revs []v1alpha2.NginxOperatorRevision) []int64 {
	var n []int64
	for _, r := range revs {
		n = append(n, r.Revision)
	}
	return n
}

func patchSpec(ctx context.Context, t *testing.T, v2 v1alpha2client.NginxOperatorInterface, name, spec string) *v1alpha2.NginxOperator {
	t.Helper()
	got, err := v2.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":`+spec+`}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patching spec %s: %v", spec, err)
	}
	return got
}

func TestRevisionsRecordEachContentChangeAndRollbackRestoresOne(t *testing.T) {
	s, ns, ctx, v2, _ := newAPI(t)
	obj := richObject("web")
	obj.Spec.Config = inlineConfig("one")
	created := mustCreate(ctx, t, v2, obj)
	if created.Status.Revision != 1 {
		t.Fatalf("status.revision after create = %d, want 1", created.Status.Revision)
	}
	revs := revisionsOf(ctx, t, s, ns, "web")
	if len(revs) != 1 || revs[0].Name != "web-1" || revs[0].Reason != v1alpha2.RevisionCreated ||
		revs[0].Content.Config == nil || revs[0].Content.Config.Inline != obj.Spec.Config.Inline || revs[0].Requester == "" ||
		fmt.Sprint(revs[0].Changed) != "[spec.config]" || len(revs[0].ContentHash) != 64 {
		t.Fatalf("revisions after create: %+v", revs)
	}
	if owner := metav1.GetControllerOf(&revs[0]); owner == nil || owner.UID != created.UID {
		t.Fatalf("revision 1 is not controlled by the NginxOperator: %+v", revs[0].OwnerReferences)
	}

	// A change that mounts nothing new records nothing; a dry run records nothing.
	if got := patchSpec(ctx, t, v2, "web", `{"image":"nginx:1.27.4"}`); got.Status.Revision != 1 {
		t.Fatalf("an image change moved status.revision to %d", got.Status.Revision)
	}
	dry, err := v2.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"config":{"inline":"events {}\nhttp {}\n"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(revisionsOf(ctx, t, s, ns, "web")); n != 1 || dry.Status.Revision != 1 {
		t.Fatalf("a dry run recorded a revision: %d revisions, status.revision %d", n, dry.Status.Revision)
	}

	two := patchSpec(ctx, t, v2, "web", `{"config":{"inline":"events {}\nhttp { server { listen 8080; location / { return 200 'two'; } } }\n"}}`)
	if two.Status.Revision != 2 {
		t.Fatalf("status.revision after a content change = %d, want 2", two.Status.Revision)
	}
	// A client's status write cannot move status.revision.
	two.Status.Revision = 40
	if got, err := v2.UpdateStatus(ctx, two, metav1.UpdateOptions{}); err != nil || got.Status.Revision != 2 {
		t.Fatalf("status write with revision 40: %v, status.revision %d", err, got.Status.Revision)
	}

	// Rollback without a revision goes to the one before the newest.
	rolled, err := v2.Rollback(ctx, "web", &v1alpha2.NginxOperatorRollback{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rolled.Spec.Config == nil || rolled.Spec.Config.Inline != obj.Spec.Config.Inline || rolled.Status.Revision != 3 || rolled.Spec.Image != "nginx:1.27.4" {
		t.Fatalf("after rollback: config %+v, revision %d, image %q; want revision 1's config as revision 3, the image kept", rolled.Spec.Config, rolled.Status.Revision, rolled.Spec.Image)
	}
	revs = revisionsOf(ctx, t, s, ns, "web")
	if got := revs[len(revs)-1]; got.Reason != v1alpha2.RevisionRolledBack || got.RolledBackTo != 1 || got.ContentHash != revs[0].ContentHash {
		t.Fatalf("revision 3: %+v", got)
	}

	// Refused: a revision that is not kept, a negative one, another object's name.
	for _, tc := range []struct {
		body *v1alpha2.NginxOperatorRollback
		want string
	}{
		{&v1alpha2.NginxOperatorRollback{ToRevision: 7}, "toRevision"},
		{&v1alpha2.NginxOperatorRollback{ToRevision: -1}, "toRevision"},
		{&v1alpha2.NginxOperatorRollback{ObjectMeta: metav1.ObjectMeta{Name: "other"}, ToRevision: 1}, "metadata.name"},
	} {
		_, err := v2.Rollback(ctx, "web", tc.body, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !containsCause(err, tc.want) {
			t.Errorf("rollback %+v: %v, want 422 naming %s", tc.body, err, tc.want)
		}
	}
	if _, err := v2.Rollback(ctx, "missing", &v1alpha2.NginxOperatorRollback{ToRevision: 1}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("rollback of a missing NginxOperator: %v, want 404", err)
	}

	// The history is bounded: with a limit of 1 the newest and one before it stay.
	patchSpec(ctx, t, v2, "web", `{"revisionHistoryLimit":1,"config":{"inline":"events {}\nhttp {}\n"}}`)
	if got := numbers(revisionsOf(ctx, t, s, ns, "web")); fmt.Sprint(got) != "[3 4]" {
		t.Fatalf("revisions with a limit of 1: %v, want [3 4]", got)
	}
	if _, err := v2.Rollback(ctx, "web", &v1alpha2.NginxOperatorRollback{ToRevision: 2}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("rollback to a trimmed revision: %v, want 422", err)
	}
	if _, err := v2.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"revisionHistoryLimit":101}}`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) || !containsCause(err, "spec.revisionHistoryLimit") {
		t.Errorf("revisionHistoryLimit 101: %v, want 422", err)
	}

	// Deleting the NginxOperator deletes its revisions; a new one of the same name
	// starts at 1 again.
	if err := v2.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := revisionsOf(ctx, t, s, ns, "web"); len(got) != 0 {
		t.Fatalf("revisions after delete: %v", numbers(got))
	}
	again := mustCreate(ctx, t, v2, obj)
	if again.Status.Revision != 1 || fmt.Sprint(numbers(revisionsOf(ctx, t, s, ns, "web"))) != "[1]" {
		t.Fatalf("re-created: status.revision %d", again.Status.Revision)
	}

	// An object that mounts nothing has no revision; its first content is revision 1.
	plain := mustCreate(ctx, t, v2, richObject("plain"))
	if plain.Status.Revision != 0 || len(revisionsOf(ctx, t, s, ns, "plain")) != 0 {
		t.Fatalf("an object without content has revision %d", plain.Status.Revision)
	}
	if got := patchSpec(ctx, t, v2, "plain", `{"config":{"inline":"events {}\nhttp {}\n"}}`); got.Status.Revision != 1 {
		t.Fatalf("first content: revision %d", got.Status.Revision)
	}
}

// TestRevisionsUnderConcurrentWritersLoseAndInventNothing writes distinct contents from
// several writers at once: every acknowledged write is exactly one revision, numbered
// without gaps, and no revision holds content nobody committed.
func TestRevisionsUnderConcurrentWritersLoseAndInventNothing(t *testing.T) {
	s, ns, ctx, v2, _ := newAPI(t)
	obj := richObject("busy")
	obj.Spec.Config = inlineConfig("start")
	obj.Spec.RevisionHistoryLimit = ptr.To[int32](100)
	mustCreate(ctx, t, v2, obj)

	const writers, writes = 6, 5
	var mu sync.Mutex
	acknowledged := map[string]bool{}
	conflicts := 0
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				config := inlineConfig(fmt.Sprintf("writer %d write %d", w, i))
				patch := fmt.Sprintf(`{"spec":{"config":{"inline":%q}}}`, config.Inline)
				for {
					_, err := v2.Patch(ctx, "busy", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
					if apierrors.IsConflict(err) {
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
					if err != nil {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					mu.Lock()
					acknowledged[config.Inline] = true
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	final, err := v2.Get(ctx, "busy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	revs := revisionsOf(ctx, t, s, ns, "busy")
	t.Logf("%d writes acknowledged, %d conflicts retried, status.revision %d, %d revisions", len(acknowledged), conflicts, final.Status.Revision, len(revs))
	if want := int64(1 + writers*writes); final.Status.Revision != want || int64(len(revs)) != want {
		t.Fatalf("status.revision %d and %d revisions, want %d of each", final.Status.Revision, len(revs), want)
	}
	for i, r := range revs {
		if r.Revision != int64(i+1) {
			t.Fatalf("revisions are not numbered 1..%d: %v", len(revs), numbers(revs))
		}
		if i > 0 && !acknowledged[r.Content.Config.Inline] {
			t.Errorf("revision %d holds content no acknowledged write sent", r.Revision)
		}
		delete(acknowledged, r.Content.Config.Inline)
	}
	if len(acknowledged) != 0 {
		t.Errorf("%d acknowledged contents have no revision", len(acknowledged))
	}
	if revs[len(revs)-1].Content.Config.Inline != final.Spec.Config.Inline {
		t.Errorf("the newest revision is not the stored content")
	}
}

// containsCause reports whether err is an API error with a cause naming field.
func containsCause(err error, field string) bool {
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == field {
			return true
		}
	}
	return false
}

// TestNewDataOfAMountedConfigMapIsARevision: the controller reports the digests of the
// ConfigMaps' data in status; new data of one it reported before is a revision, reason
// ConfigMapChanged, with no requester; a ConfigMap reported for the first time (the spec
// changed) is not.
func TestNewDataOfAMountedConfigMapIsARevision(t *testing.T) {
	s, ns, ctx, v2, _ := newAPI(t)
	obj := richObject("fromcm")
	obj.Spec.Config = &v1alpha2.ConfigSource{ConfigMapKeyRef: &v1alpha2.ConfigMapKeyReference{Name: "conf", Key: "nginx.conf"}}
	created := mustCreate(ctx, t, v2, obj)
	report := func(digests ...v1alpha2.ConfigMapDigest) *v1alpha2.NginxOperator {
		t.Helper()
		got, err := v2.Get(ctx, "fromcm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Status.ConfigMapDigests = digests
		updated, err := v2.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return updated
	}
	if got := report(v1alpha2.ConfigMapDigest{Name: "conf", Key: "nginx.conf", Digest: "aaaa"}); got.Status.Revision != created.Status.Revision {
		t.Fatalf("the first report of a ConfigMap recorded revision %d", got.Status.Revision)
	}
	files := v1alpha2.ConfigMapDigest{Name: "site", Digest: "ffff"}
	got := report(v1alpha2.ConfigMapDigest{Name: "conf", Key: "nginx.conf", Digest: "bbbb"}, files)
	if got.Status.Revision != 2 {
		t.Fatalf("new data of conf: status.revision %d, want 2", got.Status.Revision)
	}
	revs := revisionsOf(ctx, t, s, ns, "fromcm")
	last := revs[len(revs)-1]
	if last.Reason != v1alpha2.RevisionConfigMapChanged || fmt.Sprint(last.Changed) != "[ConfigMap conf]" || last.Requester != "" ||
		len(last.ConfigMapDigests) != 2 || last.ContentHash == revs[0].ContentHash || last.Content.Config.ConfigMapKeyRef.Name != "conf" {
		t.Errorf("revision 2: %+v", last)
	}
	// The same digests again, or a spec write, record nothing.
	if got := report(v1alpha2.ConfigMapDigest{Name: "conf", Key: "nginx.conf", Digest: "bbbb"}, files); got.Status.Revision != 2 {
		t.Errorf("an unchanged report recorded revision %d", got.Status.Revision)
	}
	if got := patchSpec(ctx, t, v2, "fromcm", `{"replicas":3}`); got.Status.Revision != 2 || len(got.Status.ConfigMapDigests) != 2 {
		t.Errorf("a spec write: status.revision %d, digests %v", got.Status.Revision, got.Status.ConfigMapDigests)
	}
}
