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

package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestAnonymousIsRefusedForEveryVerb: in standalone mode a request without a client
// certificate gets 401 for every verb of the resource and its subresources, and
// changes nothing.
func TestAnonymousIsRefusedForEveryVerb(t *testing.T) {
	s, ns := sharedServer(t), namespaceFor(t)
	ctx := context.Background()
	existing, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "guarded"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	collection := s.URL("/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators")
	item := collection + "/guarded"
	body := `{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":"guarded"},"spec":{"replicas":9}}`
	scale := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"guarded"},"spec":{"replicas":9}}`
	cases := []struct{ verb, method, url, contentType, body string }{
		{"list", http.MethodGet, collection, "", ""},
		{"watch", http.MethodGet, collection + "?watch=true", "", ""},
		{"list across namespaces", http.MethodGet, s.URL("/apis/operator.example.com/v1alpha2/nginxoperators"), "", ""},
		{"get", http.MethodGet, item, "", ""},
		{"create", http.MethodPost, collection, "application/json", strings.Replace(body, `"guarded"`, `"intruder"`, 1)},
		{"update", http.MethodPut, item, "application/json", body},
		{"patch", http.MethodPatch, item, "application/merge-patch+json", `{"spec":{"replicas":9}}`},
		{"apply", http.MethodPatch, item + "?fieldManager=intruder", "application/apply-patch+yaml", body},
		{"delete", http.MethodDelete, item, "", ""},
		{"deletecollection", http.MethodDelete, collection, "", ""},
		{"get status", http.MethodGet, item + "/status", "", ""},
		{"update status", http.MethodPut, item + "/status", "application/json", body},
		{"patch status", http.MethodPatch, item + "/status", "application/merge-patch+json", `{"status":{"replicas":9}}`},
		{"get scale", http.MethodGet, item + "/scale", "", ""},
		{"update scale", http.MethodPut, item + "/scale", "application/json", scale},
		{"patch scale", http.MethodPatch, item + "/scale", "application/merge-patch+json", `{"spec":{"replicas":9}}`},
	}
	anonymous := s.httpClient(true)
	for _, c := range cases {
		req, err := http.NewRequest(c.method, c.url, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		resp, err := anonymous.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.verb, err)
		}
		got := readBody(t, resp)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous %s: %d %s, want 401", c.verb, resp.StatusCode, got)
		}
	}
	after, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Get(ctx, "guarded", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after the anonymous requests: %v", err)
	}
	if after.ResourceVersion != existing.ResourceVersion {
		t.Errorf("resourceVersion %s -> %s: an anonymous request changed the object", existing.ResourceVersion, after.ResourceVersion)
	}
	list, err := s.Client.OperatorV1alpha2().NginxOperators(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d objects after the anonymous requests, want only %q", len(list.Items), "guarded")
	}
	t.Logf("%d anonymous requests (every verb, status and scale), all 401; object unchanged", len(cases))
}
