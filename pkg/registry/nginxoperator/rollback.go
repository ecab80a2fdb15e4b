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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/apis/operator/validation"
)

// RollbackREST serves POST nginxoperators/NAME/rollback: it sets the spec's config,
// files and tls back to a kept revision's, as "kubectl rollout undo" sets a Deployment's
// template back, so that the spec and what the pods load agree. The result is a new
// revision (reason RolledBack). It is a write of the NginxOperator like any other: the
// requester needs update on the NginxOperator besides create on nginxoperators/rollback,
// and the validating admission of an update (the writer-rights check among it) judges
// the resulting object.
type RollbackREST struct {
	store      *genericregistry.Store
	revisions  *genericregistry.Store
	authorizer authorizer.Authorizer
	admission  admission.ValidationInterface
	scheme     *runtime.Scheme
	enabled    func() bool
}

var (
	_ rest.NamedCreater = &RollbackREST{}
	_ rest.Storage      = &RollbackREST{}
)

// New returns the request body's type.
func (r *RollbackREST) New() runtime.Object { return &operator.NginxOperatorRollback{} }

// Destroy is a no-op: the main resource owns the shared store.
func (r *RollbackREST) Destroy() {}

// Create rolls the NginxOperator called name back and returns it as stored.
func (r *RollbackREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	rollback, ok := obj.(*operator.NginxOperatorRollback)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an NginxOperatorRollback: %T", obj))
	}
	if !r.enabled() {
		return nil, apierrors.NewMethodNotSupported(operator.Resource("nginxoperators/rollback"), "create: this apiserver runs with feature gate nginx-operator:Revisions off (it emulates a release before revisions, as during an upgrade, until every replica runs the new release)")
	}
	if errs := validation.ValidateNginxOperatorRollback(rollback, name); len(errs) > 0 {
		return nil, apierrors.NewInvalid(operator.Kind("NginxOperatorRollback"), name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if err := r.authorizeUpdate(ctx, name); err != nil {
		return nil, err
	}
	current, err := r.store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	no := current.(*operator.NginxOperator)
	to := rollback.ToRevision
	if to == 0 {
		to = no.Status.Revision - 1
	}
	rev, err := r.revision(ctx, no, to)
	if err != nil {
		return nil, err
	}
	dryRun := len(options.DryRun) > 0
	setContent := func(_ context.Context, _, oldObj runtime.Object) (runtime.Object, error) {
		o := oldObj.(*operator.NginxOperator).DeepCopy()
		content := rev.Content.DeepCopy()
		o.Spec.Config, o.Spec.Files, o.Spec.TLS = content.Config, content.Files, content.TLS
		return o, nil
	}
	updated, _, err := r.store.Update(withRollbackTo(ctx, to), name,
		rest.DefaultUpdatedObjectInfo(nil, setContent),
		nil, r.validateAsUpdate(name, dryRun), false,
		&metav1.UpdateOptions{DryRun: options.DryRun, FieldManager: options.FieldManager})
	return updated, err
}

// revision is revision n of no, if it is kept.
func (r *RollbackREST) revision(ctx context.Context, no *operator.NginxOperator, n int64) (*operator.NginxOperatorRevision, error) {
	notKept := func() error {
		return apierrors.NewInvalid(operator.Kind("NginxOperatorRollback"), no.Name, field.ErrorList{field.Invalid(field.NewPath("toRevision"), n,
			fmt.Sprintf("NginxOperator %s has no revision %d to go back to (its newest is %d; kubectl get nginxoperatorrevisions -l %s=%s lists the kept ones)",
				no.Name, n, no.Status.Revision, operator.NginxOperatorLabel, no.Name))})
	}
	if n < 1 || n > no.Status.Revision {
		return nil, notKept()
	}
	got, err := r.revisions.Get(ctx, operator.RevisionName(no.Name, n), &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, notKept()
	}
	if err != nil {
		return nil, err
	}
	rev := got.(*operator.NginxOperatorRevision)
	if owner := metav1.GetControllerOfNoCopy(rev); owner == nil || owner.UID != no.UID {
		return nil, notKept()
	}
	return rev, nil
}

// authorizeUpdate asks whether the requester may update the NginxOperator: a rollback
// writes it, so create on the subresource alone is not enough.
func (r *RollbackREST) authorizeUpdate(ctx context.Context, name string) error {
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewForbidden(operator.Resource("nginxoperators"), name, fmt.Errorf("no user in the request"))
	}
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	decision, reason, err := r.authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: user, Verb: "update", APIGroup: operator.GroupName, APIVersion: v1alpha2.SchemeGroupVersion.Version,
		Resource: "nginxoperators", Namespace: namespace, Name: name, ResourceRequest: true,
	})
	if decision == authorizer.DecisionAllow {
		return nil
	}
	why := fmt.Sprintf("a rollback updates the NginxOperator: user %q may not update nginxoperators in namespace %q", user.GetName(), namespace)
	if reason != "" {
		why += ": " + reason
	}
	if err != nil {
		why += ": " + err.Error()
	}
	return apierrors.NewForbidden(operator.Resource("nginxoperators"), name, fmt.Errorf("%s", why))
}

// validateAsUpdate runs the server's validating admission on the rollback's result as on
// an update of the NginxOperator through the main resource.
func (r *RollbackREST) validateAsUpdate(name string, dryRun bool) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		if r.admission == nil || !r.admission.Handles(admission.Update) {
			return nil
		}
		user, _ := genericapirequest.UserFrom(ctx)
		namespace, _ := genericapirequest.NamespaceFrom(ctx)
		attrs := admission.NewAttributesRecord(obj, old, v1alpha2.SchemeGroupVersion.WithKind("NginxOperator"), namespace, name,
			v1alpha2.SchemeGroupVersion.WithResource("nginxoperators"), "", admission.Update, &metav1.UpdateOptions{}, dryRun, user)
		return r.admission.Validate(ctx, attrs, admission.NewObjectInterfacesFromScheme(r.scheme))
	}
}
