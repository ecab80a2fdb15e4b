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

package content

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// The sidecar's port answers whatever the pod's configuration says: a redirect is an
// error, not followed, and no proxy sees the request.
func TestSidecarReadsFollowNoRedirect(t *testing.T) {
	var elsewhere atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		_, _ = w.Write([]byte(`{"loaded": "x"}`))
	}))
	defer target.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		pod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+reload.StatePath, code)
		}))
		state, err := readSidecarState(context.Background(), pod.URL+reload.StatePath)
		pod.Close()
		if err == nil || !strings.Contains(err.Error(), http.StatusText(code)) {
			t.Errorf("%d: state %+v, error %v; want the redirect as an error", code, state, err)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
	if sidecarClient.Transport.(*http.Transport).Proxy != nil {
		t.Error("the sidecar client uses a proxy")
	}
}
