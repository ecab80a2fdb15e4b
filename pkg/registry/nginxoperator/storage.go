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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/features"
	"github.com/example/nginx-operator/pkg/registry/compact"
	"github.com/example/nginx-operator/pkg/registry/decorate"
)

// Storage bundles the main resource with its subresources and its revisions.
type Storage struct {
	NginxOperator *REST
	Status        *StatusREST
	Scale         *ScaleREST
	Rollback      *RollbackREST
	Rendered      *RenderedREST
	Revisions     *RevisionREST
}

// Writes are what the subresources need besides storage: the server's authorizer and its
// validating admission, to judge a rollback as the update it is, and the cluster, which
// the rendered view reads (nil in standalone mode, where there is none).
type Writes struct {
	Authorizer authorizer.Authorizer
	Admission  admission.ValidationInterface
	Cluster    kubernetes.Interface
}

// NewStorage builds the etcd-backed storage of nginxoperators and nginxoperatorrevisions.
// gates are nginx-operator's feature gates at the server's emulated release: they decide
// which fields it accepts.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, gates featuregate.FeatureGate, writes Writes) (*Storage, error) {
	revisions, err := newRevisionStore(scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	strategy := NewStrategy(scheme, gates)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &operator.NginxOperator{} },
		NewListFunc:               func() runtime.Object { return &operator.NginxOperatorList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  operator.Resource("nginxoperators"),
		SingularQualifiedResource: operator.Resource("nginxoperator"),

		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy,
		ResetFieldsStrategy: strategy,

		TableConvertor: tableConvertor{},
	}
	// What the watch cache keeps is compacted as it is decoded: equal strings and
	// managed-fields sets of different objects share one copy.
	optsGetter = compact.RESTOptionsGetter(optsGetter, compactNginxOperator)
	// Revisions are recorded around the storage (the watch cache over etcd), where each
	// write's final object and its commit are seen.
	revisionsOn := func() bool { return gates == nil || gates.Enabled(features.Revisions) }
	optsGetter = decorate.Storage(optsGetter, func(s storage.Interface) storage.Interface {
		return &recordingStorage{Interface: s, revisions: revisions, now: time.Now, enabled: revisionsOn}
	})
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, err
	}

	statusStore := *store
	statusStrategy := NewStatusStrategy(strategy)
	statusStore.UpdateStrategy = statusStrategy
	statusStore.ResetFieldsStrategy = statusStrategy

	return &Storage{
		NginxOperator: &REST{store},
		Status:        &StatusREST{store: &statusStore},
		Scale:         &ScaleREST{store: store},
		Rollback:      &RollbackREST{store: store, revisions: revisions, authorizer: writes.Authorizer, admission: writes.Admission, scheme: scheme, enabled: revisionsOn},
		Rendered:      &RenderedREST{store: store, cluster: writes.Cluster, authorizer: writes.Authorizer},
		Revisions:     &RevisionREST{store: revisions},
	}, nil
}

// REST serves the main resource.
type REST struct {
	*genericregistry.Store
}

// ShortNames makes "kubectl get ngx" work.
func (r *REST) ShortNames() []string { return []string{"ngx"} }

// Categories makes "kubectl get nginx-operator" list NginxOperators. They are not in "all":
// kubectl expands a category from its cached discovery, so while this apiserver is down
// "kubectl get all" would fail for every user of the cluster (docs/reliability.md).
func (r *REST) Categories() []string { return []string{"nginx-operator"} }

// StatusREST serves the status subresource.
type StatusREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher                  = &StatusREST{}
	_ rest.ResetFieldsStrategy      = &StatusREST{}
	_ rest.ShortNamesProvider       = &REST{}
	_ rest.CategoriesProvider       = &REST{}
	_ rest.StandardStorage          = &REST{}
	_ rest.TableConvertor           = &StatusREST{}
	_ rest.GroupVersionKindProvider = &ScaleREST{}
)

// New returns an empty NginxOperator.
func (r *StatusREST) New() runtime.Object { return &operator.NginxOperator{} }

// Destroy is a no-op: the main resource owns the shared store.
func (r *StatusREST) Destroy() {}

// Get returns the whole object, as for built-in status subresources.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes status only; creating through the status subresource is refused.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields tells server-side apply that the status subresource never writes
// metadata or spec.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable renders the same columns as the main resource.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
