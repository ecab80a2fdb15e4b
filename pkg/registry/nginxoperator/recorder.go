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

package nginxoperator

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// abandonedAfter is when a revision that no NginxOperator's status.revision reached is
// taken for one whose write never committed (the apiserver stopped in between), not one
// being recorded now: far longer than a write may take (the request timeout is 60 s).
const abandonedAfter = 3 * time.Minute

// basedOnAnnotation on a revision is the resourceVersion of the NginxOperator its write
// started from. A write can commit only onto that version: once the object has moved
// on, a revision that is not pointed at never will be.
const basedOnAnnotation = "operator.example.com/based-on-resource-version"

// recordingStorage records a revision in every write of an NginxOperator that changes
// what spec.config, spec.files and spec.tls mount. Like a commit in git, the revision is
// written first and the NginxOperator's status.revision, in the same etcd write as the
// spec, then points at it: a revision exists for every content ever committed (nothing
// lost), and one whose write did not commit is never pointed at (nothing invented; it
// is removed by that write or, after a crash, replaced by the next). Deleting the
// NginxOperator deletes its revisions.
//
// While feature gate Revisions is off (the server emulates 0.1, as during an upgrade from
// it) nothing is recorded and status.revision is left as stored.
type recordingStorage struct {
	storage.Interface
	revisions *genericregistry.Store
	now       func() time.Time
	enabled   func() bool
}

type rollbackKey struct{}

// revisionOf is what a revision records besides its number and its NginxOperator.
type revisionOf struct {
	reason          operator.RevisionReason
	content, before *operator.RevisionContent
	digests         []operator.ConfigMapDigest
	// changed, when set, replaces the content fields that differ from before.
	changed []string
}

// changedConfigMaps names the ConfigMaps whose mounted data has another digest in now
// than in before; one that appears or disappears (the spec changed) is not a change of
// data.
func changedConfigMaps(before, now []operator.ConfigMapDigest) []string {
	was := map[[2]string]string{}
	for _, d := range before {
		was[[2]string{d.Name, d.Key}] = d.Digest
	}
	var changed []string
	for _, d := range now {
		if digest, ok := was[[2]string{d.Name, d.Key}]; ok && digest != d.Digest {
			changed = append(changed, "ConfigMap "+d.Name)
		}
	}
	return changed
}

// withRollbackTo marks ctx's write as a rollback to revision n.
func withRollbackTo(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, rollbackKey{}, n)
}

func (s *recordingStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	no, ok := obj.(*operator.NginxOperator)
	content := operator.RevisionContent{}
	if ok {
		content = no.Spec.Content()
	}
	if !ok || content.IsEmpty() || !s.enabled() {
		return s.Interface.Create(ctx, key, obj, out, ttl)
	}
	var attempts []*operator.NginxOperatorRevision
	rev, err := s.record(ctx, &attempts, no, 1, revisionOf{reason: operator.RevisionCreated, content: &content, before: &operator.RevisionContent{}})
	if err != nil {
		return err
	}
	no.Status.Revision = rev.Revision
	err = s.Interface.Create(ctx, key, obj, out, ttl)
	if err != nil {
		s.discard(ctx, attempts, nil)
	}
	return err
}

func (s *recordingStorage) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	var attempts []*operator.NginxOperatorRevision
	// committed are the revisions the last attempt recorded: the new one, and revision 1
	// when it adopted content stored before revisions were recorded.
	var committed map[types.UID]bool
	recording := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		committed = map[types.UID]bool{}
		out, ttl, err := tryUpdate(input, res)
		if err != nil {
			return out, ttl, err
		}
		old, isOld := input.(*operator.NginxOperator)
		no, isNew := out.(*operator.NginxOperator)
		if !isOld || !isNew {
			return out, ttl, nil
		}
		// Only this writer moves status.revision, whichever subresource the write came
		// through and whatever status the client sent.
		no.Status.Revision = old.Status.Revision
		oldContent, newContent := old.Spec.Content(), no.Spec.Content()
		specChanged := !oldContent.Equal(&newContent)
		// A status write can tell that a ConfigMap's data changed; a spec write keeps the
		// stored status, so only the status subresource moves these digests.
		changedMaps := changedConfigMaps(old.Status.ConfigMapDigests, no.Status.ConfigMapDigests)
		if !s.enabled() || (!specChanged && len(changedMaps) == 0) {
			return out, ttl, nil
		}
		next := revisionOf{reason: operator.RevisionUpdated, content: &newContent, before: &oldContent}
		if !specChanged {
			next = revisionOf{reason: operator.RevisionConfigMapChanged, content: &newContent, digests: no.Status.ConfigMapDigests, changed: changedMaps}
		}
		head := old.Status.Revision
		if old.UID == "" { // server-side apply creating the object
			next.reason = operator.RevisionCreated
		} else if head == 0 && !oldContent.IsEmpty() {
			// Content stored before revisions were recorded becomes revision 1, so that
			// a rollback can reach it.
			adopted, err := s.record(ctx, &attempts, old, 1, revisionOf{reason: operator.RevisionAdopted, content: &oldContent, before: &operator.RevisionContent{}, digests: old.Status.ConfigMapDigests})
			if err != nil {
				return nil, nil, err
			}
			committed[adopted.UID] = true
			head = 1
		}
		rev, err := s.record(ctx, &attempts, no, head+1, next)
		if err != nil {
			return nil, nil, err
		}
		no.Status.Revision = rev.Revision
		committed[rev.UID] = true
		return out, ttl, nil
	}
	err := s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, recording, cachedExistingObject)
	if err != nil {
		committed = nil
	}
	s.discard(ctx, attempts, committed)
	if no, ok := destination.(*operator.NginxOperator); ok && err == nil && len(committed) > 0 {
		oldest := no.Status.Revision - int64(no.Spec.HistoryLimit())
		s.deleteRevisionsOf(ctx, no.Namespace, no.Name, func(rev *operator.NginxOperatorRevision) bool {
			owner := metav1.GetControllerOfNoCopy(rev)
			foreign := owner == nil || owner.UID != no.UID
			abandoned := rev.Revision > no.Status.Revision && s.now().Sub(rev.CreationTimestamp.Time) > abandonedAfter
			return foreign || rev.Revision < oldest || abandoned
		})
	}
	return err
}

func (s *recordingStorage) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	if err := s.Interface.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts); err != nil {
		return err
	}
	if no, ok := out.(*operator.NginxOperator); ok {
		s.deleteRevisionsOf(ctx, no.Namespace, no.Name, func(*operator.NginxOperatorRevision) bool { return true })
	}
	return nil
}

// record writes revision n of no with content. A revision of that name already there
// is replaced when no write can still point at it: one of an earlier NginxOperator of
// the same name, one this write made in an attempt that did not commit, one based on an
// older version of the object, or one left longer than abandonedAfter. Otherwise another
// write is recording it now, and this one gets a Conflict to try again.
func (s *recordingStorage) record(ctx context.Context, attempts *[]*operator.NginxOperatorRevision, no *operator.NginxOperator, n int64, what revisionOf) (*operator.NginxOperatorRevision, error) {
	reason, content := what.reason, what.content
	changed := what.changed
	if changed == nil {
		changed = content.ChangedFields(what.before)
	}
	rev := &operator.NginxOperatorRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:      operator.RevisionName(no.Name, n),
			Namespace: no.Namespace,
			Labels:    map[string]string{operator.NginxOperatorLabel: no.Name},
		},
		Revision:         n,
		NginxOperator:    no.Name,
		Reason:           reason,
		Changed:          changed,
		ContentHash:      content.HashWith(what.digests),
		Content:          *content,
		ConfigMapDigests: append([]operator.ConfigMapDigest(nil), what.digests...),
	}
	// An update's object carries the resourceVersion it was read at, which its commit
	// requires; a create's carries none.
	basedOn := no.ResourceVersion
	if basedOn != "" {
		rev.Annotations = map[string]string{basedOnAnnotation: basedOn}
	}
	if no.UID != "" {
		rev.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: v1alpha2.SchemeGroupVersion.String(), Kind: "NginxOperator", Name: no.Name, UID: no.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
		}}
	}
	// Adopted content and a ConfigMap's new data have no requester the apiserver knows.
	if reason != operator.RevisionAdopted && reason != operator.RevisionConfigMapChanged {
		if user, ok := genericapirequest.UserFrom(ctx); ok {
			rev.Requester = user.GetName()
		}
		if to, ok := ctx.Value(rollbackKey{}).(int64); ok {
			rev.Reason, rev.RolledBackTo = operator.RevisionRolledBack, to
		}
	}
	ctx = genericapirequest.WithNamespace(ctx, no.Namespace)
	for try := 0; ; try++ {
		created, err := s.revisions.Create(ctx, rev.DeepCopy(), nil, &metav1.CreateOptions{})
		if err == nil {
			r := created.(*operator.NginxOperatorRevision)
			*attempts = append(*attempts, r)
			return r, nil
		}
		if !apierrors.IsAlreadyExists(err) || try > 0 {
			return nil, fmt.Errorf("recording revision %d of NginxOperator %s: %w", n, no.Name, err)
		}
		got, err := s.revisions.Get(ctx, rev.Name, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		existing := got.(*operator.NginxOperatorRevision)
		if !s.replaceable(existing, no, basedOn, *attempts) {
			return nil, apierrors.NewConflict(operator.Resource("nginxoperators"), no.Name,
				fmt.Errorf("another write is recording revision %d now; try again", n))
		}
		if err := s.deleteRevision(ctx, existing); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
}

func (s *recordingStorage) replaceable(existing *operator.NginxOperatorRevision, no *operator.NginxOperator, basedOn string, attempts []*operator.NginxOperatorRevision) bool {
	for _, a := range attempts {
		if a.UID == existing.UID {
			return true
		}
	}
	owner := metav1.GetControllerOfNoCopy(existing)
	stale := basedOn != "" && existing.Annotations[basedOnAnnotation] != basedOn
	return owner == nil || owner.UID != no.UID || stale || s.now().Sub(existing.CreationTimestamp.Time) > abandonedAfter
}

func (s *recordingStorage) deleteRevision(ctx context.Context, rev *operator.NginxOperatorRevision) error {
	_, _, err := s.revisions.Delete(ctx, rev.Name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &rev.UID}})
	return err
}

// discard deletes the revisions of a write's attempts but the committed ones.
func (s *recordingStorage) discard(ctx context.Context, attempts []*operator.NginxOperatorRevision, committed map[types.UID]bool) {
	for _, a := range attempts {
		if committed[a.UID] {
			continue
		}
		if err := s.deleteRevision(genericapirequest.WithNamespace(ctx, a.Namespace), a); err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Deleting an uncommitted revision; the next content change of its NginxOperator replaces it", "revision", klog.KObj(a))
		}
	}
}

// deleteRevisionsOf deletes the revisions labelled with the NginxOperator's name that
// drop says to: after a content change those past the history limit and those of no
// live NginxOperator (an earlier one of that name, or an abandoned write's); after the
// NginxOperator's deletion all of them. A failure is logged: the next change retries.
func (s *recordingStorage) deleteRevisionsOf(ctx context.Context, namespace, name string, drop func(*operator.NginxOperatorRevision) bool) {
	ctx = genericapirequest.WithNamespace(ctx, namespace)
	list, err := s.revisions.List(ctx, &metainternalversion.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{operator.NginxOperatorLabel: name}),
	})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing revisions to delete", "nginxOperator", klog.KRef(namespace, name))
		return
	}
	items := list.(*operator.NginxOperatorRevisionList).Items
	for i := range items {
		if !drop(&items[i]) {
			continue
		}
		if err := s.deleteRevision(ctx, &items[i]); err != nil && !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Error(err, "Deleting a revision", "revision", klog.KObj(&items[i]))
		}
	}
}
