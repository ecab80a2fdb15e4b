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

package nginxreload

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// TestStateHandler: /reload answers the state as JSON, in reload.State's names.
func TestStateHandler(t *testing.T) {
	r := &Reloader{}
	r.state = reload.State{Desired: "config=b", Mounted: "config=b", Loaded: "config=a", Rejected: "config=b",
		Message: `[emerg] unknown directive "foo"`, Reloads: 2, Failures: 1}
	rec := httptest.NewRecorder()
	r.StateHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, reload.StatePath, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := `{"desired":"config=b","mounted":"config=b","loaded":"config=a","rejected":"config=b","message":"[emerg] unknown directive \"foo\"","reloads":2,"failures":1}` + "\n"
	if rec.Body.String() != want {
		t.Errorf("body\n %s\nwant\n %s", rec.Body.String(), want)
	}
	var got reload.State
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got != r.State() {
		t.Errorf("decoded %+v, %v", got, err)
	}
}
