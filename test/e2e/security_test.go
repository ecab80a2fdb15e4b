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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/example/nginx-operator/test/framework"
)

// Anonymous requests never reach an object: our apiserver answers 401 to every verb and
// subresource when called directly (delegated mode; standalone mode is covered by
// test/integration), and through the aggregator the kube-apiserver refuses them first
// (401, or 403 for system:anonymous where the cluster enables anonymous authentication).
func TestAnonymousIsRejected(t *testing.T) {
	t.Parallel()
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: anon-guarded, namespace: default}\n", "apply", "-f", "-")
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "anon-guarded", "--ignore-not-found") })
	anonymous := httpClient(t, "")
	for _, r := range everyVerb("anon-guarded") {
		code, body, _ := do(t, anonymous, r.method, operatorURL(r.path), r.headers, r.body)
		if code != http.StatusUnauthorized {
			t.Errorf("anonymous %s directly: %d %s, want 401", r.verb, code, body)
		}
		code, body, _ = do(t, anonymous, r.method, kubeURL(r.path), r.headers, r.body)
		if code != http.StatusUnauthorized && !(code == http.StatusForbidden && strings.Contains(body, `User \"system:anonymous\" cannot `+r.verb)) {
			t.Errorf("anonymous %s through kube-apiserver: %d %s, want 401 or 403 for system:anonymous", r.verb, code, body)
		}
	}
	if got := mustKubectl(t, "", "get", "ngx", "anon-guarded", "-o", "jsonpath={.spec.replicas}"); got != "1" {
		t.Errorf("an anonymous request changed the object: replicas=%s", got)
	}
}

// request is one API request by verb, as the authorizer names it.
type request struct {
	verb, resource string
	method, path   string
	headers        map[string]string
	body           string
}

// everyVerb lists a request for every verb on nginxoperators and for get, update and
// patch of the status and scale subresources, all on the object name in default.
func everyVerb(name string) []request {
	obj := `{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":"` + name + `","namespace":"default"},"spec":{"replicas":3}}`
	scale := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"` + name + `","namespace":"default"},"spec":{"replicas":3}}`
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	jsonBody := map[string]string{"Content-Type": "application/json"}
	item := collection + "/" + name
	return []request{
		{"get", "nginxoperators", http.MethodGet, item, nil, ""},
		{"list", "nginxoperators", http.MethodGet, collection, nil, ""},
		{"list", "nginxoperators", http.MethodGet, "/apis/operator.example.com/v1alpha2/nginxoperators", nil, ""},
		{"watch", "nginxoperators", http.MethodGet, collection + "?watch=true&timeoutSeconds=5", nil, ""},
		{"create", "nginxoperators", http.MethodPost, collection, jsonBody, strings.Replace(obj, name, name+"-new", 1)},
		{"update", "nginxoperators", http.MethodPut, item, jsonBody, obj},
		{"patch", "nginxoperators", http.MethodPatch, item, merge, `{"spec":{"replicas":3}}`},
		{"patch", "nginxoperators", http.MethodPatch, item + "?fieldManager=intruder", map[string]string{"Content-Type": "application/apply-patch+yaml"}, obj},
		{"delete", "nginxoperators", http.MethodDelete, item, nil, ""},
		{"deletecollection", "nginxoperators", http.MethodDelete, collection, nil, ""},
		{"get", "nginxoperators/status", http.MethodGet, item + "/status", nil, ""},
		{"update", "nginxoperators/status", http.MethodPut, item + "/status", jsonBody, obj},
		{"patch", "nginxoperators/status", http.MethodPatch, item + "/status", merge, `{"status":{"replicas":3}}`},
		{"get", "nginxoperators/scale", http.MethodGet, item + "/scale", nil, ""},
		{"update", "nginxoperators/scale", http.MethodPut, item + "/scale", jsonBody, scale},
		{"patch", "nginxoperators/scale", http.MethodPatch, item + "/scale", merge, `{"spec":{"replicas":3}}`},
	}
}

func TestUserWithoutRBACIsForbiddenForEveryVerb(t *testing.T) {
	t.Parallel()
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
	// Every verb and subresource by raw HTTP, as the user nobody: through the aggregator
	// (impersonated by the admin; the kube-apiserver authorizes before it proxies) and
	// directly to our apiserver with the front proxy's certificate (our apiserver's own
	// delegated authorization decides). The message names the verb and resource the
	// authorizer saw, so each request is refused for what it is.
	admin, frontProxy := httpClient(t, "admin"), httpClient(t, "front-proxy-client")
	for _, r := range everyVerb("guarded") {
		want := fmt.Sprintf(`User \"nobody\" cannot %s resource \"%s\" in API group \"operator.example.com\"`, r.verb, r.resource)
		for _, via := range []struct {
			name    string
			client  *http.Client
			url     string
			headers map[string]string
		}{
			{"through kube-apiserver", admin, kubeURL(r.path), map[string]string{"Impersonate-User": "nobody"}},
			{"directly behind the front proxy", frontProxy, operatorURL(r.path), map[string]string{"X-Remote-User": "nobody", "X-Remote-Group": "system:authenticated"}},
		} {
			headers := map[string]string{}
			for k, v := range r.headers {
				headers[k] = v
			}
			for k, v := range via.headers {
				headers[k] = v
			}
			code, body, _ := do(t, via.client, r.method, via.url, headers, r.body)
			if code != http.StatusForbidden || !strings.Contains(body, want) {
				t.Errorf("%s %s %s as nobody %s: %d %s, want 403 with %s", r.method, r.path, r.verb, via.name, code, body, want)
			}
		}
	}
	if got := mustKubectl(t, "", "get", "ngx", "guarded", "-o", "jsonpath={.spec.replicas}"); got != "1" {
		t.Errorf("a forbidden request changed the object: replicas=%s", got)
	}
	if out := mustKubectl(t, "", "get", "ngx", "-o", "name"); strings.Contains(out, "guarded-new") {
		t.Errorf("a forbidden create made an object: %s", out)
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
	t.Parallel()
	asAdmin := map[string]string{"X-Remote-User": "kubernetes-admin", "X-Remote-Group": "system:masters", "Accept": "application/json"}
	// Signed by the cluster CA, not the front-proxy CA: headers ignored; the certificate's
	// own user (our apiserver's identity) may not read nginxoperators.
	code, body, _ := do(t, httpClient(t, "nginx-operator-apiserver-client"), http.MethodGet, operatorURL(collection), asAdmin, "")
	if code != http.StatusForbidden || !strings.Contains(body, "system:nginx-operator-apiserver") {
		t.Errorf("headers from a non-front-proxy client: %d %s, want 403 for the certificate's own user", code, body)
	}
	// Signed by the front-proxy CA, but not for a name --requestheader-allowed-names lists:
	// headers ignored, and the certificate is no client certificate of the cluster CA either.
	if code, body, _ := do(t, clientSignedByFrontProxyCA(t, "not-the-front-proxy"), http.MethodGet, operatorURL(collection), asAdmin, ""); code != http.StatusUnauthorized {
		t.Errorf("headers from a front-proxy-CA certificate with a name that is not allowed: %d %s, want 401", code, body)
	}
	// The real front proxy's certificate makes the same headers count.
	if code, body, _ := do(t, httpClient(t, "front-proxy-client"), http.MethodGet, operatorURL(collection), asAdmin, ""); code != http.StatusOK {
		t.Errorf("headers from the front proxy: %d %s, want 200", code, body)
	}
}

// clientSignedByFrontProxyCA returns a client presenting a fresh client certificate for
// commonName, signed by the local front-proxy CA.
func clientSignedByFrontProxyCA(t *testing.T, commonName string) *http.Client {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(pkiFile("front-proxy-ca.crt"), pkiFile("front-proxy-ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := framework.IssueCertificate(&ca, commonName, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	c := httpClient(t, "")
	c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{leaf}
	return c
}
