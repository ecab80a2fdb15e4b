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
	"errors"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// rbacLike allows get on every nginxoperator to "all", and only "mine" to "one", and
// records the names it was asked about.
type rbacLike struct {
	asked []string
	err   error
}

func (r *rbacLike) decide(attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	r.asked = append(r.asked, attrs.GetName())
	if r.err != nil && attrs.GetName() == "" {
		return authorizer.DecisionNoOpinion, "", r.err
	}
	switch {
	case !attrs.IsResourceRequest():
		return authorizer.DecisionAllow, "non-resource", nil
	case attrs.GetUser().GetName() == "all":
		return authorizer.DecisionAllow, "every name", nil
	case attrs.GetUser().GetName() == "one" && attrs.GetName() == "mine":
		return authorizer.DecisionAllow, "resourceNames", nil
	}
	return authorizer.DecisionNoOpinion, "no rule", nil
}

func (r *rbacLike) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	return r.decide(attrs)
}

func (r *rbacLike) ConditionsAwareAuthorize(_ context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(r.decide(attrs))
}

func (r *rbacLike) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func request(userName, verb, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: userName}, Verb: verb, Namespace: "default",
		APIGroup: "operator.example.com", APIVersion: "v1alpha2", Resource: "nginxoperators",
		Name: name, ResourceRequest: true,
	}
}

func TestResourceWideFirst(t *testing.T) {
	cases := []struct {
		name      string
		attrs     authorizer.AttributesRecord
		failWide  error
		wantAllow bool
		wantAsked []string
	}{
		{"allowed for every name: answered by the name-less question", request("all", "get", "a"), nil, true, []string{""}},
		{"allowed for this name only: the exact question follows", request("one", "get", "mine"), nil, true, []string{"", "mine"}},
		{"another name of a per-name grant stays refused", request("one", "get", "theirs"), nil, false, []string{"", "theirs"}},
		{"no name (list): one question, unchanged", request("one", "list", ""), nil, false, []string{""}},
		{"a failed name-less question falls back to the exact one", request("all", "update", "a"), errors.New("webhook down"), true, []string{"", "a"}},
		{"non-resource requests pass through", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "one"}, Verb: "get", Path: "/healthz"}, nil, true, []string{""}},
	}
	for _, tc := range cases {
		for _, conditionsAware := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				delegate := &rbacLike{err: tc.failWide}
				a := ResourceWideFirst(delegate)
				var allowed bool
				if conditionsAware {
					allowed = a.ConditionsAwareAuthorize(context.Background(), tc.attrs).IsAllow()
				} else {
					decision, _, _ := a.Authorize(context.Background(), tc.attrs)
					allowed = decision == authorizer.DecisionAllow
				}
				if allowed != tc.wantAllow {
					t.Errorf("allowed = %v, want %v", allowed, tc.wantAllow)
				}
				if len(delegate.asked) != len(tc.wantAsked) {
					t.Fatalf("asked about names %q, want %q", delegate.asked, tc.wantAsked)
				}
				for i := range tc.wantAsked {
					if delegate.asked[i] != tc.wantAsked[i] {
						t.Errorf("question %d about name %q, want %q", i, delegate.asked[i], tc.wantAsked[i])
					}
				}
			})
		}
	}
}

// The name-less question keeps everything else the request carries.
func TestEveryNameKeepsTheRest(t *testing.T) {
	attrs := request("all", "patch", "a")
	attrs.Subresource = "status"
	wide := everyName{attrs}
	if wide.GetName() != "" || wide.GetVerb() != "patch" || wide.GetSubresource() != "status" ||
		wide.GetNamespace() != "default" || wide.GetResource() != "nginxoperators" || wide.GetUser().GetName() != "all" {
		t.Errorf("everyName changed more than the name: %+v", wide)
	}
}
