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

package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The rights the tests grant and check, answered as kubectl answers them: `create role`,
// `create rolebinding` and `auth can-i`.

// roleVerbs are the verbs `kubectl create role` takes without a word; the others (use,
// bind, escalate, impersonate, or unknown ones) it checks or warns about itself.
var roleVerbs = []string{"*", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// splitList reads a flag kubectl takes as a comma-separated list, given once or more.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		out = append(out, strings.Split(v, ",")...)
	}
	return out
}

// createRole is `kubectl create role NAME --verb=... --resource=... [--resource-name=...]`:
// one rule per API group (in the groups' order), each resource named as discovery names it.
func createRole(ctx context.Context, c *getClients, namespace string, r writeRequest) (stdout, stderr string, err error) {
	var verbs []string
	for _, v := range splitList(r.verbs) {
		if !slices.Contains(roleVerbs, v) {
			return "", "", errKubectlMustAnswer
		}
		if v == "*" {
			verbs = []string{"*"}
			break
		}
		if !slices.Contains(verbs, v) {
			verbs = append(verbs, v)
		}
	}
	byGroup := map[string][]string{}
	for _, res := range splitList(r.resources) {
		resource, subresource, _ := strings.Cut(res, "/")
		name, group, _ := strings.Cut(resource, ".")
		if name == "" || name == "*" {
			return "", "", errKubectlMustAnswer
		}
		gvr, err := c.expander.ResourceFor(schema.GroupVersionResource{Group: group, Resource: name})
		if err != nil {
			return "", "", errKubectlMustAnswer // kubectl names what it cannot find
		}
		if subresource != "" {
			gvr.Resource += "/" + subresource
		}
		if !slices.Contains(byGroup[gvr.Group], gvr.Resource) {
			byGroup[gvr.Group] = append(byGroup[gvr.Group], gvr.Resource)
		}
	}
	var resourceNames []any
	for _, n := range r.resourceNames {
		if !slices.Contains(resourceNames, any(n)) {
			resourceNames = append(resourceNames, n)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var rules []any
	for _, g := range groups {
		rule := map[string]any{"apiGroups": []any{g}, "resources": toAny(byGroup[g]), "verbs": toAny(verbs)}
		if len(resourceNames) > 0 {
			rule["resourceNames"] = resourceNames
		}
		rules = append(rules, rule)
	}
	role := rbacObject("Role", r.args[0], namespace)
	role.Object["rules"] = rules
	created, err := createRBAC(ctx, c, role)
	if err != nil {
		return "", errorLine(err), err
	}
	return created, "", nil
}

// createRoleBinding is `kubectl create rolebinding NAME --role=R|--clusterrole=R` with its
// subjects: users, then groups, then service accounts (NAMESPACE:NAME).
func createRoleBinding(ctx context.Context, c *getClients, namespace string, r writeRequest) (stdout, stderr string, err error) {
	roleRef := map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": r.role}
	if r.clusterRole != "" {
		roleRef["kind"], roleRef["name"] = "ClusterRole", r.clusterRole
	}
	var subjects []any
	for _, u := range r.users {
		subjects = append(subjects, map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": u})
	}
	for _, g := range r.groups {
		subjects = append(subjects, map[string]any{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g})
	}
	for _, sa := range r.serviceAccounts {
		ns, name, ok := strings.Cut(sa, ":")
		if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
			return "", "", errKubectlMustAnswer
		}
		subjects = append(subjects, map[string]any{"kind": "ServiceAccount", "namespace": ns, "name": name})
	}
	binding := rbacObject("RoleBinding", r.args[0], namespace)
	binding.Object["roleRef"] = roleRef
	if subjects != nil {
		binding.Object["subjects"] = subjects
	}
	created, err := createRBAC(ctx, c, binding)
	if err != nil {
		err = fmt.Errorf("failed to create rolebinding: %v", err)
		return "", errorLine(err), err
	}
	return created, "", nil
}

func rbacObject(kind, name, namespace string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace},
	}}
}

// createRBAC creates a Role or RoleBinding as kubectl create does and says so.
func createRBAC(ctx context.Context, c *getClients, obj *unstructured.Unstructured) (string, error) {
	m, err := c.kindMapping(obj.GroupVersionKind())
	if err != nil {
		return "", errKubectlMustAnswer
	}
	created, err := c.resourceFor(m, obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: "kubectl-create", FieldValidation: "Strict"})
	if err != nil {
		return "", err
	}
	return kindName(m, created.GetName()) + " created\n", nil
}

func toAny(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// errNotAllowed is kubectl auth can-i's exit status 1, its answer "no" printed.
var errNotAllowed = errors.New("exit status 1")

// canIVerbs are the verbs kubectl auth can-i knows without a warning that this answers.
var canIVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// canI is `kubectl auth can-i VERB TYPE[/NAME]` in a namespace: a SelfSubjectAccessReview,
// "yes", or "no" with the authorizer's reason and exit status 1. A type discovery cannot
// name or one that is not namespaced (kubectl warns about both) is left to kubectl.
func canI(ctx context.Context, c *getClients, namespace string, r writeRequest) (stdout, stderr string, err error) {
	verb, target := r.args[0], r.args[1]
	typ, name, _ := strings.Cut(target, "/")
	if !slices.Contains(canIVerbs, verb) || typ == "*" {
		return "", "", errKubectlMustAnswer
	}
	full, groupResource := schema.ParseResourceArg(strings.ToLower(typ))
	var gvr schema.GroupVersionResource
	if full != nil {
		gvr, _ = c.expander.ResourceFor(*full)
	}
	if gvr.Empty() {
		if gvr, err = c.expander.ResourceFor(groupResource.WithVersion("")); err != nil {
			return "", "", errKubectlMustAnswer
		}
	}
	gvk, err := c.expander.KindFor(gvr)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	m, err := c.expander.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil || m.Scope.Name() != meta.RESTScopeNameNamespace {
		return "", "", errKubectlMustAnswer
	}
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{
			"namespace": namespace, "verb": verb, "group": gvr.Group, "resource": gvr.Resource,
			"subresource": r.subresource, "name": name,
		}},
	}}
	reviews, err := c.kindMapping(review.GroupVersionKind())
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	answer, err := c.resourceFor(reviews, "").Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return "", errorLine(err), err
	}
	if allowed, _, _ := unstructured.NestedBool(answer.Object, "status", "allowed"); allowed {
		return "yes\n", "", nil
	}
	out := "no"
	for _, field := range []string{"reason", "evaluationError"} {
		if text, _, _ := unstructured.NestedString(answer.Object, "status", field); text != "" {
			out += " - " + text
		}
	}
	return out + "\n", "", errNotAllowed
}
