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

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/example/nginx-operator/test/framework"
)

// aggregatedGrant is a verb on a resource of operator.example.com that one of the built-in
// user-facing ClusterRoles must hold once kube-controller-manager has aggregated
// artifacts/deploy/51-rbac-aggregated.yaml into it.
type aggregatedGrant struct{ verb, resource string }

// covers reports whether the rules allow verb on resource in operator.example.com.
// rollbackTo is the body of a rollback to revision n.
func rollbackTo(n int) string {
	return fmt.Sprintf(`{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperatorRollback","toRevision":%d}`, n)
}

func covers(rules []rbacv1.PolicyRule, g aggregatedGrant) bool {
	for _, r := range rules {
		if (slices.Contains(r.APIGroups, "operator.example.com") || slices.Contains(r.APIGroups, "*")) &&
			(slices.Contains(r.Resources, g.resource) || slices.Contains(r.Resources, "*")) &&
			(slices.Contains(r.Verbs, g.verb) || slices.Contains(r.Verbs, "*")) {
			return true
		}
	}
	return false
}

// TestAggregatedRolesCoverNginxOperators: users bound in a namespace to the built-in
// ClusterRoles view, edit and admin use nginxoperators there as they use Deployments,
// through the roles of artifacts/deploy/51-rbac-aggregated.yaml, which nothing binds
// directly. Every claim is a real request through kube-apiserver as the impersonated user;
// the viewer reads (get, list, watch, status, scale) and is refused writes, the editor and
// the admin create, patch, scale (kubectl scale), delete and deletecollection, and are
// refused writing /status, which is the controller's.
func TestAggregatedRolesCoverNginxOperators(t *testing.T) {
	const ns = "e2e-aggregated-roles"
	const viewer, editor, nsAdmin = "e2e-viewer", "e2e-editor", "e2e-ns-admin"
	// A namespace left terminating by an earlier run (-count) must be gone first.
	mustKubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--timeout=2m")
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	for user, role := range map[string]string{viewer: "view", editor: "edit", nsAdmin: "admin"} {
		mustKubectl(t, "", "create", "rolebinding", user, "-n", ns, "--clusterrole="+role, "--user="+user)
	}

	read := []aggregatedGrant{
		{"get", "nginxoperators"}, {"list", "nginxoperators"}, {"watch", "nginxoperators"},
		{"get", "nginxoperators/status"}, {"get", "nginxoperators/scale"}, {"watch", "nginxoperators/scale"},
		{"get", "nginxoperatorrevisions"}, {"list", "nginxoperatorrevisions"}, {"watch", "nginxoperatorrevisions"},
	}
	write := []aggregatedGrant{
		{"create", "nginxoperators"}, {"update", "nginxoperators"}, {"patch", "nginxoperators"},
		{"delete", "nginxoperators"}, {"deletecollection", "nginxoperators"},
		{"update", "nginxoperators/scale"}, {"patch", "nginxoperators/scale"},
		{"create", "nginxoperators/rollback"},
	}
	want := map[string][]aggregatedGrant{"view": read, "edit": append(slices.Clone(read), write...), "admin": append(slices.Clone(read), write...)}
	// aggregated reports whether every built-in role holds all (or, with all false, none)
	// of the grants it should get from our roles.
	aggregated := func(all bool) func() bool {
		return func() bool {
			for role, grants := range want {
				var cr rbacv1.ClusterRole
				if err := json.Unmarshal([]byte(get(t, "get", "clusterrole", role, "-o", "json")), &cr); err != nil {
					return false
				}
				for _, g := range grants {
					if covers(cr.Rules, g) != all {
						return false
					}
				}
			}
			return true
		}
	}

	// The rules come from artifacts/deploy/51-rbac-aggregated.yaml (which the stack applies
	// as the base does), and from nothing else: without its roles the built-in ones lose
	// them, and applying the file gives them back. kube-controller-manager's
	// clusterrole-aggregation controller rewrites the built-in roles asynchronously, and then
	// kube-apiserver's RBAC informers must see them: poll for both.
	manifest := filepath.Join(repoRoot, "artifacts", "deploy", "51-rbac-aggregated.yaml")
	if _, errOut, err := kubectl(t, "", "get", "clusterrole", "nginx-operator-view", "nginx-operator-edit"); err != nil {
		t.Errorf("the stack (hack/local-up.sh) did not apply 51-rbac-aggregated.yaml: %v %s", err, errOut)
	}
	t.Cleanup(func() { kubectl(t, "", "apply", "-f", manifest) })
	mustKubectl(t, "", "delete", "-f", manifest, "--ignore-not-found")
	framework.WaitFor(t, 2*time.Minute, "view, edit and admin to lose the nginxoperators rules with our roles", aggregated(false))
	mustKubectl(t, "", "apply", "-f", manifest)
	took := framework.WaitFor(t, 2*time.Minute, "view, edit and admin to aggregate the nginxoperators rules", aggregated(true))
	roles := framework.Measure(t, "aggregated-roles")
	roles.Duration("rules-aggregated", took, "view, edit and admin held the nginxoperators rules after 51-rbac-aggregated.yaml was applied")
	t.Logf("view, edit and admin held the nginxoperators rules %s after 51-rbac-aggregated.yaml was applied", framework.Describe(took))
	// The aggregated roles must not grant what the controller alone does: status writes.
	for _, role := range []string{"view", "edit", "admin"} {
		var cr rbacv1.ClusterRole
		if err := json.Unmarshal([]byte(mustKubectl(t, "", "get", "clusterrole", role, "-o", "json")), &cr); err != nil {
			t.Fatal(err)
		}
		for _, verb := range []string{"update", "patch"} {
			if covers(cr.Rules, aggregatedGrant{verb, "nginxoperators/status"}) {
				t.Errorf("ClusterRole %s allows %s on nginxoperators/status, which only the controller writes", role, verb)
			}
		}
	}
	took = framework.WaitFor(t, 3*time.Minute, "kube-apiserver's RBAC to let each user list nginxoperators", func() bool {
		for _, user := range []string{viewer, editor, nsAdmin} {
			out, _, _ := kubectl(t, "", "auth", "can-i", "list", "nginxoperators.operator.example.com", "-n", ns, "--as", user)
			if strings.TrimSpace(out) != "yes" {
				return false
			}
		}
		return true
	})
	roles.Duration("users-authorized", took, "then, kube-apiserver authorized the users bound to them")
	t.Logf("kube-apiserver authorized all three users %s later", framework.Describe(took))

	// Requests through kube-apiserver's aggregation layer as the user (kube-apiserver
	// authorizes, then our apiserver asks it again with a SubjectAccessReview).
	admin := adminHTTPClient(t)
	base := "/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators"
	as := func(user, method, path, contentType, body string) (int, string) {
		t.Helper()
		headers := map[string]string{"Impersonate-User": user}
		if contentType != "" {
			headers["Content-Type"] = contentType
		}
		code, out, _ := do(t, admin, method, kubeURL(path), headers, body)
		return code, out
	}
	object := func(name string, labels string) string {
		return fmt.Sprintf(`{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":%q,"namespace":%q,"labels":{%s}},"spec":{"replicas":1}}`, name, ns, labels)
	}
	const merge, jsonBody = "application/merge-patch+json", "application/json"
	forbidden := func(user, what string, code int, body string) {
		t.Helper()
		if code != http.StatusForbidden || !strings.Contains(body, fmt.Sprintf(`User \"%s\" cannot`, user)) {
			t.Errorf("%s as %s: %d %.300s, want 403 naming the user", what, user, code, body)
		}
	}

	mustKubectl(t, object("seen", ""), "create", "-f", "-")

	t.Run("view", func(t *testing.T) {
		if out := mustKubectl(t, "", "get", "ngx", "seen", "-n", ns, "--as", viewer, "-o", "jsonpath={.metadata.name}"); out != "seen" {
			t.Errorf("kubectl get ngx seen as %s: %q", viewer, out)
		}
		if out := mustKubectl(t, "", "get", "ngx", "-n", ns, "--as", viewer, "-o", "name"); !strings.Contains(out, "nginxoperator.operator.example.com/seen") {
			t.Errorf("kubectl get ngx as %s: %q, want seen listed", viewer, out)
		}
		// A watch: 200 and the existing object as its first event, until the server ends it.
		if code, body := as(viewer, http.MethodGet, base+"?watch=true&timeoutSeconds=2", "", ""); code != http.StatusOK ||
			!strings.Contains(body, `"type":"ADDED"`) || !strings.Contains(body, `"name":"seen"`) {
			t.Errorf("watch as %s: %d %.300s, want 200 with seen ADDED", viewer, code, body)
		}
		for _, sub := range []string{"status", "scale"} {
			if code, body := as(viewer, http.MethodGet, base+"/seen/"+sub, "", ""); code != http.StatusOK {
				t.Errorf("GET seen/%s as %s: %d %.300s, want 200", sub, viewer, code, body)
			}
		}

		code, body := as(viewer, http.MethodPost, base, jsonBody, object("by-viewer", ""))
		forbidden(viewer, "create", code, body)
		code, body = as(viewer, http.MethodPatch, base+"/seen", merge, `{"spec":{"replicas":2}}`)
		forbidden(viewer, "patch", code, body)
		code, body = as(viewer, http.MethodPatch, base+"/seen/scale", merge, `{"spec":{"replicas":2}}`)
		forbidden(viewer, "patch scale", code, body)
		code, body = as(viewer, http.MethodDelete, base+"/seen", "", "")
		forbidden(viewer, "delete", code, body)
		code, body = as(viewer, http.MethodPost, base+"/seen/rollback", jsonBody, rollbackTo(1))
		forbidden(viewer, "rollback", code, body)
		if _, errOut, err := kubectl(t, "", "get", "nginxoperatorrevisions", "-n", ns, "--as", viewer); err != nil {
			t.Errorf("kubectl get nginxoperatorrevisions as %s: %v %s", viewer, err, errOut)
		}
		for _, args := range [][]string{{"scale", "ngx", "seen", "--replicas=2"}, {"delete", "ngx", "seen"}} {
			if _, errOut, err := kubectl(t, "", append(args, "-n", ns, "--as", viewer)...); err == nil || !strings.Contains(errOut, "Forbidden") {
				t.Errorf("kubectl %s as %s: %v %s, want Forbidden", strings.Join(args, " "), viewer, err, errOut)
			}
		}
		if got := mustKubectl(t, "", "get", "ngx", "seen", "-n", ns, "-o", "jsonpath={.spec.replicas}"); got != "1" {
			t.Errorf("a refused write changed seen: replicas=%s", got)
		}
	})

	for _, user := range []string{editor, nsAdmin} {
		t.Run(map[string]string{editor: "edit", nsAdmin: "admin"}[user], func(t *testing.T) {
			name := user + "-site"
			mustKubectl(t, object(name, ""), "create", "-f", "-", "--as", user)
			if out := mustKubectl(t, "", "get", "ngx", "-n", ns, "--as", user, "-o", "name"); !strings.Contains(out, "/"+name) {
				t.Errorf("kubectl get ngx as %s: %q, want %s listed", user, out, name)
			}
			mustKubectl(t, "", "patch", "ngx", name, "-n", ns, "--as", user, "--type=merge", "-p", `{"metadata":{"labels":{"team":"a"}}}`)
			mustKubectl(t, "", "scale", "ngx", name, "-n", ns, "--as", user, "--replicas=3")
			if got := mustKubectl(t, "", "get", "ngx", name, "-n", ns, "-o", "jsonpath={.spec.replicas} {.metadata.labels.team}"); got != "3 a" {
				t.Errorf("after patch and kubectl scale as %s: replicas and label %q, want \"3 a\"", user, got)
			}
			if code, body := as(user, http.MethodGet, base+"/"+name+"/scale", "", ""); code != http.StatusOK || !strings.Contains(body, `"replicas":3`) {
				t.Errorf("GET %s/scale as %s: %d %.300s, want 200 with 3 replicas", name, user, code, body)
			}

			// /status is the controller's: refused to editors and admins, as for Deployments.
			code, body := as(user, http.MethodPatch, base+"/"+name+"/status", merge, `{"status":{"readyReplicas":3}}`)
			forbidden(user, "patch status", code, body)
			code, body = as(user, http.MethodPut, base+"/"+name+"/status", jsonBody, object(name, ""))
			forbidden(user, "update status", code, body)
			if _, errOut, err := kubectl(t, "", "patch", "ngx", name, "-n", ns, "--as", user, "--subresource=status", "--type=merge", "-p", `{"status":{"readyReplicas":3}}`); err == nil || !strings.Contains(errOut, "Forbidden") {
				t.Errorf("kubectl patch --subresource=status as %s: %v %s, want Forbidden", user, err, errOut)
			}

			// Each content change is a revision the user reads and may roll back to.
			for _, text := range []string{"one", "two"} {
				mustKubectl(t, "", "patch", "ngx", name, "-n", ns, "--as", user, "--type=merge", "-p",
					fmt.Sprintf(`{"spec":{"config":{"inline":"events {}\nhttp { server { return 200 %s; } }\n"}}}`, text))
			}
			revisions := mustKubectl(t, "", "get", "ngxrev", "-n", ns, "--as", user, "-l", "operator.example.com/nginxoperator="+name, "-o", "name")
			if got := strings.Fields(revisions); len(got) != 2 || !strings.HasSuffix(got[0], "/"+name+"-1") || !strings.HasSuffix(got[1], "/"+name+"-2") {
				t.Errorf("revisions of %s as %s: %q, want %s-1 and %s-2", name, user, revisions, name, name)
			}
			if code, body := as(user, http.MethodPost, base+"/"+name+"/rollback", jsonBody, rollbackTo(1)); code != http.StatusCreated {
				t.Errorf("rollback of %s as %s: %d %.300s, want 201", name, user, code, body)
			}
			if got := mustKubectl(t, "", "get", "ngx", name, "-n", ns, "-o", "jsonpath={.status.revision} {.spec.config.inline}"); !strings.HasPrefix(got, "3 ") || !strings.Contains(got, "return 200 one;") {
				t.Errorf("after the rollback as %s: %q, want revision 3 with revision 1's configuration", user, got)
			}

			mustKubectl(t, "", "delete", "ngx", name, "-n", ns, "--as", user, "--timeout=2m")
			if _, errOut, err := kubectl(t, "", "get", "ngx", name, "-n", ns); err == nil || !strings.Contains(errOut, "NotFound") {
				t.Errorf("%s after delete as %s: %v %s, want NotFound", name, user, err, errOut)
			}

			// deletecollection, with a selector so that only the user's own objects go.
			batch := fmt.Sprintf(`"batch":%q`, user)
			for i := range 2 {
				if code, body := as(user, http.MethodPost, base, jsonBody, object(fmt.Sprintf("%s-batch-%d", user, i), batch)); code != http.StatusCreated {
					t.Fatalf("create %s-batch-%d as %s: %d %.300s", user, i, user, code, body)
				}
			}
			if code, body := as(user, http.MethodDelete, base+"?labelSelector=batch%3D"+user, "", ""); code != http.StatusOK {
				t.Errorf("deletecollection as %s: %d %.300s, want 200", user, code, body)
			}
			framework.WaitFor(t, 2*time.Minute, "the deletecollection of "+user+"'s batch to finish", func() bool {
				out, _, err := kubectl(t, "", "get", "ngx", "-n", ns, "-l", "batch="+user, "-o", "name")
				return err == nil && strings.TrimSpace(out) == ""
			})
			if got := mustKubectl(t, "", "get", "ngx", "seen", "-n", ns, "-o", "name"); strings.TrimSpace(got) != "nginxoperator.operator.example.com/seen" {
				t.Errorf("deletecollection with a selector as %s took seen too: %q", user, got)
			}
		})
	}
}
