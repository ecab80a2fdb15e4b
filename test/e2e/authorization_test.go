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
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOneReviewPerVerbNotPerName checks what our apiserver's delegated authorization costs
// kube-apiserver: GETs of many names by a user RBAC allows on the whole resource take about
// one SubjectAccessReview, not one each, while a grant for one name (resourceNames) still
// allows that name only.
func TestOneReviewPerVerbNotPerName(t *testing.T) {
	const ns, names = "e2e-reviews", 60
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, "", "create", "role", "ngx-getter", "-n", ns, "--verb", "get", "--resource", "nginxoperators.operator.example.com")
	mustKubectl(t, "", "create", "rolebinding", "ngx-getter", "-n", ns, "--role", "ngx-getter", "--user", "getter")
	mustKubectl(t, "", "create", "role", "ngx-one", "-n", ns, "--verb", "get", "--resource", "nginxoperators.operator.example.com", "--resource-name", "mine")
	mustKubectl(t, "", "create", "rolebinding", "ngx-one", "-n", ns, "--role", "ngx-one", "--user", "one-name")
	// kube-apiserver answers the reviews from its RBAC informers: wait until both grants are
	// seen, so that no refusal is cached before the counting starts.
	waitFor(t, 3*time.Minute, "kube-apiserver's RBAC to allow getter and one-name", func() bool {
		for _, as := range []string{"getter", "one-name"} {
			out, _, _ := kubectl(t, "", "auth", "can-i", "get", "nginxoperators.operator.example.com/mine", "-n", ns, "--as", as)
			if strings.TrimSpace(out) != "yes" {
				return false
			}
		}
		return true
	})

	// Straight to our apiserver behind the front proxy, so that every review counted is one
	// our apiserver asked for; the objects need not exist: authorization comes first, and
	// 404 instead of 403 is the proof that it allowed the request.
	frontProxy, admin := httpClient(t, "front-proxy-client"), adminHTTPClient(t)
	get := func(user, name string) int {
		code, body, _ := do(t, frontProxy, http.MethodGet, operatorURL(fmt.Sprintf("/apis/operator.example.com/v1alpha2/namespaces/%s/nginxoperators/%s", ns, name)),
			map[string]string{"X-Remote-User": user, "X-Remote-Group": "system:authenticated"}, "")
		if code != http.StatusNotFound && code != http.StatusForbidden {
			t.Fatalf("GET %s as %s: %d %s", name, user, code, body)
		}
		return code
	}
	reviews := func() float64 {
		return prometheusSample(t, scrape(t, admin, operatorURL("/metrics")), "apiserver_delegated_authz_request_total")
	}

	before := reviews()
	for i := range names {
		if code := get("getter", fmt.Sprintf("object-%d", i)); code != http.StatusNotFound {
			t.Fatalf("GET object-%d as getter: %d, want 404 (allowed)", i, code)
		}
	}
	spent := reviews() - before
	t.Logf("%d GETs of distinct names cost %.0f SubjectAccessReviews", names, spent)
	// One review per allow-cache period (10 s) is expected; one per name would be 60.
	if spent > names/4 {
		t.Errorf("%d GETs of distinct names cost %.0f SubjectAccessReviews; want about one per verb, not one per name", names, spent)
	}

	if code := get("one-name", "mine"); code != http.StatusNotFound {
		t.Errorf("GET mine as one-name, granted by resourceNames: %d, want 404 (allowed)", code)
	}
	if code := get("one-name", "theirs"); code != http.StatusForbidden {
		t.Errorf("GET theirs as one-name, granted only mine: %d, want 403", code)
	}
}

// TestRequesterReviewsAreCached: what a spec asks of the controller is authorized as its
// writer (pkg/admission/requester) through the same cached delegated authorizer as the
// request itself, so a writer's repeated creates of a spec that names a Secret and a
// ConfigMap cost a few SubjectAccessReviews in all, not three per create.
func TestRequesterReviewsAreCached(t *testing.T) {
	const ns, writer, creates = "e2e-requester-reviews", "reviewed-writer", 40
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, "", "create", "role", "ngx-writer", "-n", ns, "--verb=create", "--resource=nginxoperators.operator.example.com")
	mustKubectl(t, "", "create", "role", "site-reader", "-n", ns, "--verb=get", "--resource=secrets,configmaps", "--resource-name=site")
	for _, role := range []string{"ngx-writer", "site-reader"} {
		mustKubectl(t, "", "create", "rolebinding", role, "-n", ns, "--role="+role, "--user="+writer)
	}
	waitFor(t, 3*time.Minute, "kube-apiserver's RBAC to allow the writer to get Secret site", func() bool {
		out, _, _ := kubectl(t, "", "auth", "can-i", "get", "secrets/site", "-n", ns, "--as", writer)
		return strings.TrimSpace(out) == "yes"
	})

	// Server-side dry runs straight to our apiserver behind the front proxy: admission runs
	// in full, every review counted is one our apiserver asked for, and nothing is stored.
	frontProxy, admin := httpClient(t, "front-proxy-client"), adminHTTPClient(t)
	create := func(i int) {
		body := fmt.Sprintf(`{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":"site-%d"},`+
			`"spec":{"tls":[{"secretName":"site"}],"config":{"configMapKeyRef":{"name":"site","key":"nginx.conf"}}}}`, i)
		code, out, _ := do(t, frontProxy, http.MethodPost, operatorURL("/apis/operator.example.com/v1alpha2/namespaces/"+ns+"/nginxoperators?dryRun=All"),
			map[string]string{"X-Remote-User": writer, "X-Remote-Group": "system:authenticated", "Content-Type": "application/json"}, body)
		if code != http.StatusCreated {
			t.Fatalf("dry-run create %d as %s: %d %s", i, writer, code, out)
		}
	}
	reviews := func() float64 {
		return prometheusSample(t, scrape(t, admin, operatorURL("/metrics")), "apiserver_delegated_authz_request_total")
	}

	before := reviews()
	create(0)
	first := reviews() - before
	for i := 1; i < creates; i++ {
		create(i)
	}
	rest := reviews() - before - first
	t.Logf("the first create of a spec naming a Secret and a ConfigMap cost %.0f SubjectAccessReviews (the create, then each reference), the next %d cost %.0f in all",
		first, creates-1, rest)
	// Three questions, each a resource-wide one first (--authorization-resource-wide-first)
	// and, for the named Secret and ConfigMap, the exact one after its denial.
	if first < 3 || first > 5 {
		t.Errorf("the first create cost %.0f reviews, want 3 to 5: the create and one or two per reference", first)
	}
	// Repeats are answered from the cache for its 10 s; one review per create would be 3*39.
	if rest > (creates-1)/4 {
		t.Errorf("%d more creates cost %.0f reviews; want them answered from the authorizer's cache", creates-1, rest)
	}
}
