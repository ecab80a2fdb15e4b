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

package apiserver

import (
	"context"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// ResourceWideFirst lets the decision for a verb on every object of a resource stand for
// each named object. The delegated authorizer caches SubjectAccessReviews by their whole
// attributes, name included, so without this every GET of a new name and every write of
// the controller costs kube-apiserver a review. Asked first without the name, the answer
// is cached once per user, verb, resource and namespace. An empty name means every object
// (SubjectAccessReview's contract), so an allow for it covers any name; anything else falls
// back to the exact question, which keeps per-name grants (RBAC resourceNames) working.
func ResourceWideFirst(delegate authorizer.Authorizer) authorizer.Authorizer {
	return resourceWideFirst{delegate: delegate}
}

type resourceWideFirst struct {
	delegate authorizer.Authorizer
}

func (a resourceWideFirst) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if named(attrs) {
		if decision, reason, err := a.delegate.Authorize(ctx, everyName{attrs}); err == nil && decision == authorizer.DecisionAllow {
			return decision, reason, nil
		}
	}
	return a.delegate.Authorize(ctx, attrs)
}

// ConditionsAwareAuthorize takes only an unconditional allow for every name: a conditional
// answer is about the objects it is evaluated on, so it is asked for the named one.
func (a resourceWideFirst) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	if named(attrs) {
		if decision := a.delegate.ConditionsAwareAuthorize(ctx, everyName{attrs}); decision.IsAllow() && decision.Error() == nil {
			return decision
		}
	}
	return a.delegate.ConditionsAwareAuthorize(ctx, attrs)
}

func (a resourceWideFirst) EvaluateConditions(ctx context.Context, decision authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return a.delegate.EvaluateConditions(ctx, decision, data)
}

func named(attrs authorizer.Attributes) bool {
	return attrs.IsResourceRequest() && attrs.GetName() != ""
}

// everyName is the same request about every object of the resource.
type everyName struct {
	authorizer.Attributes
}

func (everyName) GetName() string { return "" }
