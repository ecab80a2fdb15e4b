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
	"strconv"
	"strings"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/client-go/tools/cache"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// newRevisionStore is the storage of nginxoperatorrevisions. Only this package writes
// it (the recorder, in the write of an NginxOperator); RevisionREST serves reads.
func newRevisionStore(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*genericregistry.Store, error) {
	strategy := revisionStrategy{scheme, names.SimpleNameGenerator}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &operator.NginxOperatorRevision{} },
		NewListFunc:               func() runtime.Object { return &operator.NginxOperatorRevisionList{} },
		PredicateFunc:             matchRevision,
		DefaultQualifiedResource:  operator.Resource("nginxoperatorrevisions"),
		SingularQualifiedResource: operator.Resource("nginxoperatorrevision"),

		CreateStrategy: strategy,
		UpdateStrategy: strategy,
		DeleteStrategy: strategy,

		TableConvertor: revisionTable{},
	}
	// "kubectl nginx history" and the recorder list one NginxOperator's revisions by its
	// label: the watch cache answers from an index instead of scanning the namespace.
	indexers := &cache.Indexers{storage.LabelIndex(operator.NginxOperatorLabel): func(obj any) ([]string, error) {
		r, ok := obj.(*operator.NginxOperatorRevision)
		if !ok {
			return nil, fmt.Errorf("not an NginxOperatorRevision: %T", obj)
		}
		return []string{r.Labels[operator.NginxOperatorLabel]}, nil
	}}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: revisionAttrs, Indexers: indexers}); err != nil {
		return nil, err
	}
	return store, nil
}

// revisionStrategy governs the recorder's writes: revisions are immutable.
type revisionStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

func (revisionStrategy) NamespaceScoped() bool                                            { return true }
func (revisionStrategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (revisionStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (revisionStrategy) Validate(context.Context, runtime.Object) field.ErrorList         { return nil }
func (revisionStrategy) WarningsOnCreate(context.Context, runtime.Object) []string        { return nil }
func (revisionStrategy) AllowCreateOnUpdate(context.Context) bool                         { return false }
func (revisionStrategy) AllowUnconditionalUpdate(context.Context) bool                    { return false }
func (revisionStrategy) Canonicalize(runtime.Object)                                      {}
func (revisionStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// ValidateUpdate refuses every change: a revision is what was loaded, once.
func (revisionStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return field.ErrorList{field.Forbidden(field.NewPath(""), "revisions are immutable")}
}

func revisionAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	r, ok := obj.(*operator.NginxOperatorRevision)
	if !ok {
		return nil, nil, fmt.Errorf("given object is not an NginxOperatorRevision: %T", obj)
	}
	return labels.Set(r.Labels), generic.ObjectMetaFieldsSet(&r.ObjectMeta, true), nil
}

func matchRevision(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: revisionAttrs, IndexLabels: []string{operator.NginxOperatorLabel}}
}

// RevisionREST serves nginxoperatorrevisions read-only: get, list and watch, as
// "kubectl get nginxoperatorrevisions" uses them. Revisions are written by the
// apiserver in the write of their NginxOperator, and deleted with it or when they
// fall out of its spec.revisionHistoryLimit.
type RevisionREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Getter               = &RevisionREST{}
	_ rest.Lister               = &RevisionREST{}
	_ rest.Watcher              = &RevisionREST{}
	_ rest.Scoper               = &RevisionREST{}
	_ rest.SingularNameProvider = &RevisionREST{}
	_ rest.ShortNamesProvider   = &RevisionREST{}
	_ rest.CategoriesProvider   = &RevisionREST{}
)

func (r *RevisionREST) New() runtime.Object     { return r.store.New() }
func (r *RevisionREST) NewList() runtime.Object { return r.store.NewList() }
func (r *RevisionREST) Destroy()                { r.store.Destroy() }
func (r *RevisionREST) NamespaceScoped() bool   { return true }

// GetSingularName is the singular name kubectl accepts.
func (r *RevisionREST) GetSingularName() string { return "nginxoperatorrevision" }

// ShortNames makes "kubectl get ngxrev" work.
func (r *RevisionREST) ShortNames() []string { return []string{"ngxrev"} }

// Categories lists revisions with the NginxOperators in "kubectl get nginx-operator".
func (r *RevisionREST) Categories() []string { return []string{"nginx-operator"} }

func (r *RevisionREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

func (r *RevisionREST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	return r.store.List(ctx, options)
}

func (r *RevisionREST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return r.store.Watch(ctx, options)
}

func (r *RevisionREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

var revisionColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "<nginxoperator>-<revision>."},
	{Name: "NginxOperator", Type: "string", Description: "The NginxOperator whose content this was."},
	{Name: "Revision", Type: "integer", Description: "The number, from 1."},
	{Name: "Reason", Type: "string", Description: "Created, Updated or RolledBack (to revision N)."},
	{Name: "Changed", Type: "string", Description: "The content fields that differ from the revision before."},
	{Name: "Requester", Type: "string", Description: "The user whose write made it."},
	{Name: "Age", Type: "string", Description: "Time since it was recorded."},
	{Name: "Hash", Type: "string", Priority: 1, Description: "The start of the content's SHA-256."},
}

type revisionTable struct{}

func (revisionTable) ConvertToTable(_ context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := newTable(object, tableOptions, revisionColumns)
	switch o := object.(type) {
	case *operator.NginxOperatorRevision:
		table.Rows = []metav1.TableRow{revisionRow(o)}
	case *operator.NginxOperatorRevisionList:
		table.Rows = make([]metav1.TableRow, 0, len(o.Items))
		for i := range o.Items {
			table.Rows = append(table.Rows, revisionRow(&o.Items[i]))
		}
	default:
		return nil, fmt.Errorf("cannot render %T as a table of nginxoperatorrevisions", object)
	}
	return table, nil
}

func revisionRow(r *operator.NginxOperatorRevision) metav1.TableRow {
	reason := string(r.Reason)
	if r.Reason == operator.RevisionRolledBack {
		reason += " to " + strconv.FormatInt(r.RolledBackTo, 10)
	}
	changed := strings.Join(r.Changed, ",")
	if changed == "" {
		changed = "<none>"
	}
	requester := r.Requester
	if requester == "" {
		requester = "<unknown>"
	}
	hash := r.ContentHash
	if len(hash) > 12 {
		hash = hash[:12]
	}
	age := "<unknown>"
	if !r.CreationTimestamp.IsZero() {
		age = duration.HumanDuration(metav1.Now().Sub(r.CreationTimestamp.Time))
	}
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: r},
		Cells:  []any{r.Name, r.NginxOperator, r.Revision, reason, changed, requester, age, hash},
	}
}
