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

// Package apply is the controller's one way to write a child object: read the live one,
// compare what this field manager owns of it with what is desired, and send a
// server-side apply only when they differ; a same-named object another owner controls is
// never taken over. It is generic over the child's kind and knows its owner only as a
// client.Object.
package apply

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Applier is what Ensure and DeleteIfOwned read and write through, and whom they tell.
type Applier struct {
	// Client reads from the informer cache, which holds only the children the controller
	// labelled, and deletes.
	Client client.Client
	// Writer sends the server-side applies; nil means Client.
	Writer client.Writer
	// APIReader reads around the cache, to find a same-named object the cache does not hold.
	APIReader client.Reader
	// FieldManager owns every field applied.
	FieldManager string
	// OwnerKind names the owner's kind in messages ("... is not controlled by this <kind>").
	OwnerKind string
	// Event, when set, records an event about the owner.
	Event func(owner client.Object, eventType, reason, action, note string, args ...any)
	// CountWrite, when set, records the outcome of one write of kind and returns err.
	CountWrite func(kind string, err error) error
}

// Kind is what Ensure needs to know of one kind of child.
type Kind[T client.Object, A runtime.ApplyConfiguration] struct {
	Name string // the kind, for events, metrics and messages
	// Extract is the kind's generated Extract function: the fields a manager owns of a
	// live object, as an apply configuration.
	Extract func(T, string) (A, error)
	// Uncached reads the live child from the API server only, for kinds of which the
	// cache holds no full objects (ConfigMaps: it would hold every one of the cluster).
	Uncached bool
	// Repair, when set, changes the live child where apply cannot (ports another
	// manager added) before it is compared.
	Repair func(ctx context.Context, live T, desired A) error
}

// Result is what Ensure found and did.
type Result struct {
	Found   bool   // the child existed and the owner controls it
	Applied bool   // an apply was sent and accepted: desired now holds the server's answer
	Blocked string // a same-named object someone else controls; nothing was written
}

// Ensure reads the live child called name (from the cache, else from the API server, so
// that an apply never takes over a same-named stranger), compares what a.FieldManager
// owns of it with desired, and applies desired only when they differ. live is filled with
// the live child when there is one.
func Ensure[T client.Object, A runtime.ApplyConfiguration](ctx context.Context, a *Applier, owner client.Object, name string, live T, desired A, kind Kind[T, A]) (Result, error) {
	var res Result
	var err error
	if kind.Uncached {
		res.Found, res.Blocked, err = a.getOwnedUncached(ctx, owner, name, live, kind.Name)
	} else {
		res.Found, res.Blocked, err = a.getOwned(ctx, owner, name, live, kind.Name)
	}
	if err != nil || res.Blocked != "" {
		res.Found = false
		return res, err
	}
	if res.Found {
		if kind.Repair != nil {
			if err := kind.Repair(ctx, live, desired); err != nil {
				return res, err
			}
		}
		owned, err := kind.Extract(live, a.FieldManager)
		if err != nil {
			return res, err
		}
		if same, err := sameFields(owned, desired); err != nil || same {
			return res, err
		}
	}
	if err := a.apply(ctx, owner, desired, kind.Name, res.Found); err != nil {
		return res, err
	}
	res.Applied = true
	return res, nil
}

// DeleteIfOwned deletes the child called name, which the owner no longer asks for, when the
// owner controls it; someone else's object of that name is left alone. Only the metadata
// matters, read from the cache (which holds what the controller labelled). The UID
// precondition keeps a replacement made meanwhile safe.
func (a *Applier) DeleteIfOwned(ctx context.Context, owner client.Object, name string, live client.Object, kind string) error {
	if err := a.Client.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if controller := metav1.GetControllerOf(live); controller == nil || controller.UID != owner.GetUID() {
		return nil
	}
	err := a.countWrite(kind, a.Client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.GetUID())}))
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	a.event(owner, corev1.EventTypeNormal, "Deleted", "Delete"+kind, "deleted %s %s, which the spec no longer asks for", kind, live.GetName())
	return nil
}

// apply sends a server-side apply of a child and reports it in an event and metrics.
func (a *Applier) apply(ctx context.Context, owner client.Object, obj runtime.ApplyConfiguration, kind string, found bool) error {
	var writer client.Writer = a.Client
	if a.Writer != nil {
		writer = a.Writer
	}
	err := a.countWrite(kind, writer.Apply(ctx, obj, client.FieldOwner(a.FieldManager), client.ForceOwnership))
	if err != nil {
		a.event(owner, corev1.EventTypeWarning, "ApplyFailed", "Apply"+kind, "applying %s %s: %v", kind, owner.GetName(), err)
		return err
	}
	a.event(owner, corev1.EventTypeNormal, createdOrUpdated(found), "Apply"+kind, "%s %s %s", verb(found), kind, owner.GetName())
	return nil
}

// getOwned reads the child called name into obj, from the cache and, when the cache
// does not hold it, from the API server. It reports a block, and emits a Warning event,
// when the child exists but another controller (or nobody) controls it.
func (a *Applier) getOwned(ctx context.Context, owner client.Object, name string, obj client.Object, kind string) (found bool, blocked string, err error) {
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}
	err = a.Client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		// The cache holds only labelled objects: ask the API server before an apply
		// could take over a same-named stranger.
		err = a.APIReader.Get(ctx, key, obj)
	}
	return a.controlled(owner, obj, kind, err)
}

// getOwnedUncached is getOwned for kinds the controller caches no full objects of
// (ConfigMaps: a cache would hold every ConfigMap of the cluster). Such a child is read
// so, by name: its data is compared with what is desired, so that a steady state makes no
// writes.
func (a *Applier) getOwnedUncached(ctx context.Context, owner client.Object, name string, obj client.Object, kind string) (found bool, blocked string, err error) {
	err = a.APIReader.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, obj)
	return a.controlled(owner, obj, kind, err)
}

func (a *Applier) controlled(owner client.Object, obj client.Object, kind string, getErr error) (found bool, blocked string, err error) {
	if getErr != nil {
		return false, "", client.IgnoreNotFound(getErr)
	}
	if controller := metav1.GetControllerOf(obj); controller != nil && controller.UID == owner.GetUID() {
		return true, "", nil
	}
	blocked = fmt.Sprintf("%s %s/%s exists and is not controlled by this %s; rename or delete it", kind, owner.GetNamespace(), obj.GetName(), a.OwnerKind)
	a.event(owner, corev1.EventTypeWarning, "OwnershipConflict", "Apply"+kind, "%s", blocked)
	return true, blocked, nil
}

func (a *Applier) event(owner client.Object, eventType, reason, action, note string, args ...any) {
	if a.Event != nil {
		a.Event(owner, eventType, reason, action, note, args...)
	}
}

func (a *Applier) countWrite(kind string, err error) error {
	if a.CountWrite != nil {
		return a.CountWrite(kind, err)
	}
	return err
}

func createdOrUpdated(found bool) string {
	if found {
		return "Updated"
	}
	return "Created"
}

func verb(found bool) string {
	if found {
		return "updated"
	}
	return "created"
}
