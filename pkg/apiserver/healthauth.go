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
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// healthPaths may be read without credentials so that kubelet probes work; every
// other unauthenticated request gets 401.
var healthPaths = []string{"/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz", "/readyz/*"}

// anonymousOnlyForHealth lets unauthenticated requests through as system:anonymous
// only on health paths. The delegating authenticator of k8s.io/apiserver always ends
// in an anonymous fallback, so anonymous results are turned back into "not
// authenticated" (401) everywhere else.
type anonymousOnlyForHealth struct {
	delegate authenticator.Request
}

func (a anonymousOnlyForHealth) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	resp, ok, err := a.delegate.AuthenticateRequest(req)
	if err != nil {
		return nil, false, err
	}
	if ok && resp.User.GetName() != user.Anonymous {
		return resp, true, nil
	}
	if !isHealthPath(req.URL.Path) {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{
		Name:   user.Anonymous,
		Groups: []string{user.AllUnauthenticated},
	}}, true, nil
}

// HealthPaths are the paths anyone may read, for the delegated authorizer's
// always-allow list; a copy, so callers cannot change the policy.
func HealthPaths() []string { return append([]string(nil), healthPaths...) }

func isHealthPath(p string) bool {
	for _, h := range healthPaths {
		if prefix, wildcard := strings.CutSuffix(h, "*"); wildcard {
			if strings.HasPrefix(p, prefix) {
				return true
			}
		} else if p == h {
			return true
		}
	}
	return false
}
