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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// childKind is what ensureChild needs to know of one kind of child.
type childKind[T client.Object, A runtime.ApplyConfiguration] struct {
	name string // the kind, for events, metrics and messages
	// extract is the kind's generated Extract function: the fields a manager owns of a
	// live object, as an apply configuration.
	extract func(T, string) (A, error)
	// uncached reads the live child from the API server only, for kinds of which the
	// cache holds no full objects (ConfigMaps: it would hold every one of the cluster).
	uncached bool
	// repair, when set, changes the live child where apply cannot (ports another
	// manager added) before it is compared.
	repair func(ctx context.Context, live T, desired A) error
}

// ensured is what ensureChild found and did.
type ensured struct {
	found   bool   // the child existed and this NginxOperator controls it
	applied bool   // an apply was sent and accepted: desired now holds the server's answer
	blocked string // a same-named object someone else controls; nothing was written
}

// ensureChild is the controller's one way to write a child: read the live one (from the
// cache, else from the API server, so that an apply never takes over a same-named
// stranger), compare what this controller owns of it with desired, and apply desired only
// when they differ. live is filled with the live child when there is one.
func ensureChild[T client.Object, A runtime.ApplyConfiguration](ctx context.Context, r *Reconciler, no *v1alpha2.NginxOperator, name string, live T, desired A, kind childKind[T, A]) (ensured, error) {
	var res ensured
	var err error
	if kind.uncached {
		res.found, res.blocked, err = r.getOwnedUncached(ctx, no, name, live)
	} else {
		res.found, res.blocked, err = r.getOwned(ctx, no, name, live)
	}
	if err != nil || res.blocked != "" {
		res.found = false
		return res, err
	}
	if res.found {
		if kind.repair != nil {
			if err := kind.repair(ctx, live, desired); err != nil {
				return res, err
			}
		}
		owned, err := kind.extract(live, FieldManager)
		if err != nil {
			return res, err
		}
		if same, err := sameFields(owned, desired); err != nil || same {
			return res, err
		}
	}
	if err := r.apply(ctx, no, desired, kind.name, res.found); err != nil {
		return res, err
	}
	res.applied = true
	return res, nil
}

// deleteIfOwned deletes the child called name, which the spec no longer asks for, when this
// NginxOperator controls it; someone else's object of that name is left alone. Only the
// metadata matters, read from the cache (which holds what the controller labelled). The
// UID precondition keeps a replacement made meanwhile safe.
func (r *Reconciler) deleteIfOwned(ctx context.Context, no *v1alpha2.NginxOperator, name string, live client.Object, kind string) error {
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: no.Namespace, Name: name}, live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOf(live); owner == nil || owner.UID != no.UID {
		return nil
	}
	err := countWrite(kind, r.Client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.GetUID())}))
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	r.event(no, corev1.EventTypeNormal, "Deleted", "Delete"+kind, "deleted %s %s, which the spec no longer asks for", kind, live.GetName())
	return nil
}
