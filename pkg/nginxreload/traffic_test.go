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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// TestTrafficLogCountsBySecond: lines of reload.TrafficLogFormat are counted in the
// second nginx logged them; Since adds the seconds from a time on, lines of another
// shape are skipped, and the handler answers the same as JSON.
func TestTrafficLogCountsBySecond(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	l := &TrafficLog{Path: path}
	at := time.Unix(1_800_000_000, 0)
	line := func(offset time.Duration, status int, took float64) string {
		return fmt.Sprintf("%.3f %d %.3f\n", float64(at.Add(offset).UnixMilli())/1000, status, took)
	}
	log := line(0, 200, 0.001) + line(500*time.Millisecond, 502, 0.3) + "not a traffic line\n" +
		line(2*time.Second, 200, 0.004) + line(2*time.Second, 503, 20)
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.read(); err != nil {
		t.Fatal(err)
	}
	all, later := l.Since(at), l.Since(at.Add(time.Second))
	if all.Requests != 4 || all.Errors != 2 || later.Requests != 2 || later.Errors != 1 {
		t.Fatalf("since the first second %+v, since the second %+v", all, later)
	}
	if got := all.Quantile(0.5); got != 0.005 {
		t.Errorf("median %v; want the 5ms bucket", got)
	}
	if got := later.Quantile(0.99); got != 20 {
		t.Errorf("the slowest %v; want twice the last bound", got)
	}
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "?since=" + at.Add(time.Second).UTC().Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got reload.Traffic
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Requests != 2 || got.Errors != 1 {
		t.Errorf("handler: %+v %v", got, err)
	}
	if resp, err := http.Get(srv.URL + "?since=yesterday"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad since: %v %v", resp.Status, err)
	}
}
