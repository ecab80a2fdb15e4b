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

package nginxexporter

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestHandlerOptions: without a stub_status collector /metrics has no nginx_up; added
// collectors and handlers are served beside /metrics and /healthz.
func TestHandlerOptions(t *testing.T) {
	extra := prometheus.NewGauge(prometheus.GaugeOpts{Name: "extra_metric", Help: "An added collector."})
	extra.Set(7)
	h, err := Handler(nil, slog.New(slog.DiscardHandler), WithCollector(extra),
		WithHandler("GET /extra", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "extra")
		})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := get(t, srv.URL+"/metrics")
	if !strings.Contains(body, "extra_metric 7") || !strings.Contains(body, "go_goroutines ") {
		t.Errorf("/metrics lacks the added or the Go metrics:\n%s", body)
	}
	if strings.Contains(body, "nginx_up") {
		t.Errorf("/metrics has nginx_up without a stub_status collector:\n%s", body)
	}
	if got := get(t, srv.URL+"/extra"); got != "extra" {
		t.Errorf("/extra: %q", got)
	}
	if got := get(t, srv.URL+"/healthz"); got != "ok" {
		t.Errorf("/healthz: %q", got)
	}
}
