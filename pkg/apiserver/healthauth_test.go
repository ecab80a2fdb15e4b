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
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

type fixedAuthenticator struct {
	user *user.DefaultInfo
	err  error
}

func (f fixedAuthenticator) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	if f.user == nil {
		return nil, false, f.err
	}
	return &authenticator.Response{User: f.user}, true, nil
}

func TestAnonymousOnlyForHealth(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice"}
	anonymous := &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	cases := []struct {
		name     string
		delegate fixedAuthenticator
		path     string
		wantUser string
		wantErr  bool
	}{
		{"authenticated user anywhere", fixedAuthenticator{user: alice}, "/apis", "alice", false},
		{"nobody on an API path", fixedAuthenticator{}, "/apis", "", false},
		{"anonymous fallback on an API path", fixedAuthenticator{user: anonymous}, "/apis/operator.example.com/v1alpha2", "", false},
		{"anonymous fallback on /metrics", fixedAuthenticator{user: anonymous}, "/metrics", "", false},
		{"nobody on /healthz", fixedAuthenticator{}, "/healthz", user.Anonymous, false},
		{"anonymous on /readyz/etcd", fixedAuthenticator{user: anonymous}, "/readyz/etcd", user.Anonymous, false},
		{"lookalike path", fixedAuthenticator{}, "/healthzz", "", false},
		{"bad credentials stay an error", fixedAuthenticator{err: errors.New("bad token")}, "/healthz", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, ok, err := anonymousOnlyForHealth{delegate: tc.delegate}.AuthenticateRequest(httptest.NewRequest("GET", tc.path, nil))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			got := ""
			if ok {
				got = resp.User.GetName()
			}
			if got != tc.wantUser {
				t.Errorf("user = %q, want %q", got, tc.wantUser)
			}
		})
	}
}
