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

package controller

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
)

// fakeReviews answers TokenReviews and SubjectAccessReviews as kube-apiserver would: the
// token "scraper" is a user allowed to get /metrics, "stranger" and "user-*" users who are
// not, any other token is rejected; with failAccessReviews set, access reviews fail with a 500.
func fakeReviews(t *testing.T, failAccessReviews *atomic.Bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			var review authenticationv1.TokenReview
			if err := json.Unmarshal(body, &review); err != nil {
				t.Errorf("TokenReview: %v", err)
			}
			switch token := review.Spec.Token; {
			case token == "scraper", token == "stranger", strings.HasPrefix(token, "user-"):
				review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: token}}
			default:
				review.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
			}
			_ = json.NewEncoder(w).Encode(review)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			if failAccessReviews.Load() {
				http.Error(w, "etcd is down", http.StatusInternalServerError)
				return
			}
			var review authorizationv1.SubjectAccessReview
			if err := json.Unmarshal(body, &review); err != nil {
				t.Errorf("SubjectAccessReview: %v", err)
			}
			attrs := review.Spec.NonResourceAttributes
			review.Status.Allowed = review.Spec.User == "scraper" && attrs != nil && attrs.Verb == "get" && attrs.Path == "/metrics"
			_ = json.NewEncoder(w).Encode(review)
		default:
			http.NotFound(w, r)
		}
	}))
}

func TestMetricsAuthAnswers(t *testing.T) {
	var failAccessReviews atomic.Bool
	server := fakeReviews(t, &failAccessReviews)
	defer server.Close()
	cfg := &rest.Config{Host: server.URL}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := metricsAuth(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	handler, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "nginx_operator_reconciles_total 1\n")
	}))
	if err != nil {
		t.Fatal(err)
	}
	get := func(token string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a token kube-apiserver rejects", "forged", http.StatusUnauthorized},
		{"a user RBAC does not allow /metrics", "stranger", http.StatusForbidden},
		{"the scraper", "scraper", http.StatusOK},
	} {
		code, body := get(tc.token)
		if code != tc.want || (code != http.StatusOK) == strings.Contains(body, "nginx_operator_") {
			t.Errorf("%s: %d %q, want %d and metrics only with 200", tc.name, code, body, tc.want)
		}
	}
	// A user whose access is not cached yet, while kube-apiserver cannot review access:
	// 503, which a scraper retries, and no metrics; cached decisions still stand.
	failAccessReviews.Store(true)
	if code, body := get("user-new"); code != http.StatusServiceUnavailable || strings.Contains(body, "nginx_operator_") {
		t.Errorf("a new user while access reviews fail: %d %q, want 503 and no metrics", code, body)
	}
	if code, _ := get("scraper"); code != http.StatusOK {
		t.Errorf("the scraper, allowed before access reviews failed: %d, want 200 from the cache", code)
	}
}
