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
	"net/http"
	"strings"
	"testing"
)

func TestAnonymousIsRejected(t *testing.T) {
	anonymous := httpClient(t, "")
	if code, body, _ := do(t, anonymous, http.MethodGet, kubeURL(collection), nil, ""); code != http.StatusUnauthorized && code != http.StatusForbidden {
		t.Errorf("anonymous through kube-apiserver: %d %s", code, body)
	}
	if code, body, _ := do(t, anonymous, http.MethodGet, operatorURL(collection), nil, ""); code != http.StatusUnauthorized {
		t.Errorf("anonymous directly: %d %s, want 401", code, body)
	}
}

func TestUserWithoutRBACIsForbiddenForEveryVerb(t *testing.T) {
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: guarded, namespace: default}\n", "apply", "-f", "-")
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "guarded", "--ignore-not-found") })
	manifest := "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: intruder, namespace: default}\n"
	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"get", "ngx", "guarded"}},
		{"", []string{"get", "ngx"}},
		{"", []string{"get", "ngx", "-A"}},
		{manifest, []string{"create", "-f", "-"}},
		{manifest, []string{"apply", "--server-side", "-f", "-"}},
		{"", []string{"patch", "ngx", "guarded", "--type", "merge", "-p", `{"spec":{"replicas":3}}`}},
		{"", []string{"scale", "ngx", "guarded", "--replicas", "3"}},
		{"", []string{"patch", "ngx", "guarded", "--subresource", "status", "--type", "merge", "-p", `{"status":{"replicas":1}}`}},
		{"", []string{"delete", "ngx", "guarded"}},
		{"", []string{"get", "ngx", "--watch-only", "--request-timeout", "5s"}},
	} {
		_, errOut, err := kubectl(t, tc.stdin, append(tc.args, "--as", "nobody")...)
		if err == nil || !strings.Contains(strings.ToLower(errOut), "forbidden") {
			t.Errorf("kubectl %s as nobody: err=%v stderr=%s", strings.Join(tc.args, " "), err, errOut)
		}
	}
	if got := mustKubectl(t, "", "get", "ngx", "guarded", "-o", "jsonpath={.spec.replicas}"); got != "1" {
		t.Errorf("a forbidden request changed the object: replicas=%s", got)
	}
}

func TestNamespacedRoleGrantsExactlyWhatItSays(t *testing.T) {
	mustKubectl(t, "", "create", "namespace", "e2e-rbac-a")
	mustKubectl(t, "", "create", "namespace", "e2e-rbac-b")
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", "e2e-rbac-a", "e2e-rbac-b", "--wait=false") })
	obj := "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: app}\n"
	mustKubectl(t, obj, "apply", "-n", "e2e-rbac-a", "-f", "-")
	mustKubectl(t, obj, "apply", "-n", "e2e-rbac-b", "-f", "-")
	mustKubectl(t, "", "create", "role", "ngx-reader", "-n", "e2e-rbac-a", "--verb", "get,list,watch", "--resource", "nginxoperators.operator.example.com")
	mustKubectl(t, "", "create", "rolebinding", "ngx-reader", "-n", "e2e-rbac-a", "--role", "ngx-reader", "--user", "reader")

	// Impersonation: kube-apiserver forwards the impersonated user, and our apiserver authorizes it.
	if out := mustKubectl(t, "", "get", "ngx", "-n", "e2e-rbac-a", "--as", "reader", "-o", "name"); strings.TrimSpace(out) != "nginxoperator.operator.example.com/app" {
		t.Errorf("reader list in a: %q", out)
	}
	mustKubectl(t, "", "get", "ngx", "app", "-n", "e2e-rbac-a", "--as", "reader")
	for _, args := range [][]string{
		{"get", "ngx", "-n", "e2e-rbac-b"},
		{"get", "ngx", "app", "-n", "e2e-rbac-b"},
		{"delete", "ngx", "app", "-n", "e2e-rbac-a"},
		{"scale", "ngx", "app", "-n", "e2e-rbac-a", "--replicas", "2"},
		{"patch", "ngx", "app", "-n", "e2e-rbac-a", "--type", "merge", "-p", `{"spec":{"replicas":2}}`},
	} {
		_, errOut, err := kubectl(t, "", append(args, "--as", "reader")...)
		if err == nil || !strings.Contains(strings.ToLower(errOut), "forbidden") {
			t.Errorf("kubectl %s as reader: err=%v stderr=%s", strings.Join(args, " "), err, errOut)
		}
	}
	if out := mustKubectl(t, "", "auth", "can-i", "list", "nginxoperators.operator.example.com", "-n", "e2e-rbac-a", "--as", "reader"); strings.TrimSpace(out) != "yes" {
		t.Errorf("can-i list in a = %q", out)
	}
}

// Our apiserver must take X-Remote-* identity headers only from clients whose
// certificate the front-proxy CA signed.
func TestFrontProxyHeadersNeedTheFrontProxyCA(t *testing.T) {
	asAdmin := map[string]string{"X-Remote-User": "kubernetes-admin", "X-Remote-Group": "system:masters", "Accept": "application/json"}
	// Signed by the cluster CA, not the front-proxy CA: headers ignored; the certificate's
	// own user (our apiserver's identity) may not read nginxoperators.
	code, body, _ := do(t, httpClient(t, "nginx-operator-apiserver-client"), http.MethodGet, operatorURL(collection), asAdmin, "")
	if code != http.StatusForbidden || !strings.Contains(body, "system:nginx-operator-apiserver") {
		t.Errorf("headers from a non-front-proxy client: %d %s, want 403 for the certificate's own user", code, body)
	}
	// The real front proxy's certificate makes the same headers count.
	if code, body, _ := do(t, httpClient(t, "front-proxy-client"), http.MethodGet, operatorURL(collection), asAdmin, ""); code != http.StatusOK {
		t.Errorf("headers from the front proxy: %d %s, want 200", code, body)
	}
}
