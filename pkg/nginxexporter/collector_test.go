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
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// format prints s as nginx's stub_status module does.
func format(s StubStatus) string {
	return fmt.Sprintf("Active connections: %d \nserver accepts handled requests\n %d %d %d \nReading: %d Writing: %d Waiting: %d \n",
		s.Active, s.Accepted, s.Handled, s.Requests, s.Reading, s.Writing, s.Waiting)
}

// stubNginx serves a stub_status page whose request count goes up by one per read, as
// nginx's does (the read is itself a request).
func stubNginx(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var requests atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/stub_status", func(w http.ResponseWriter, _ *http.Request) {
		n := requests.Add(1)
		_, _ = io.WriteString(w, format(StubStatus{Active: 3, Accepted: 10, Handled: 10, Requests: uint64(n), Reading: 0, Writing: 1, Waiting: 2}))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestCollector(t *testing.T) {
	srv, requests := stubNginx(t)
	c := NewCollector(srv.URL+"/stub_status", time.Second, slog.New(slog.DiscardHandler))
	want := `
# HELP nginx_connections_accepted_total Client connections accepted since nginx started.
# TYPE nginx_connections_accepted_total counter
nginx_connections_accepted_total 10
# HELP nginx_connections_active Open client connections, including waiting ones.
# TYPE nginx_connections_active gauge
nginx_connections_active 3
# HELP nginx_connections_waiting Idle client connections waiting for a request (keep-alive).
# TYPE nginx_connections_waiting gauge
nginx_connections_waiting 2
# HELP nginx_connections_writing Open client connections where nginx is writing the response.
# TYPE nginx_connections_writing gauge
nginx_connections_writing 1
# HELP nginx_http_requests_total Client requests since nginx started.
# TYPE nginx_http_requests_total counter
nginx_http_requests_total 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "nginx_connections_accepted_total", "nginx_connections_active",
		"nginx_connections_waiting", "nginx_connections_writing", "nginx_http_requests_total"); err != nil {
		t.Fatal(err)
	}
	// Every collection reads the page again: no cache, no polling between scrapes.
	if n := testutil.CollectAndCount(c); n != 8 {
		t.Errorf("%d metrics, want 8 (nginx_up and seven from the page)", n)
	}
	if got := requests.Load(); got != 2 {
		t.Errorf("the page was read %d times in two collections", got)
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader("# HELP nginx_up 1 when the last scrape read nginx's stub_status page, 0 when it failed (nginx down, or its configuration does not include the status server).\n# TYPE nginx_up gauge\nnginx_up 1\n"), "nginx_up"); err != nil {
		t.Error(err)
	}
}

// TestCollectorNginxDown: nginx_up is 0 and no other nginx metric is exported when the
// page cannot be read, is not there (404) or is not a stub_status page; the exporter
// keeps answering.
func TestCollectorNginxDown(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<html>welcome to nginx</html>")
	}))
	defer garbage.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	for name, url := range map[string]string{"refused": closedURL, "404": notFound.URL, "not stub_status": garbage.URL, "timeout": slow.URL} {
		t.Run(name, func(t *testing.T) {
			c := NewCollector(url+"/stub_status", 200*time.Millisecond, slog.New(slog.DiscardHandler))
			if n := testutil.CollectAndCount(c); n != 1 {
				t.Errorf("%d metrics, want nginx_up alone", n)
			}
			if err := testutil.CollectAndCompare(c, strings.NewReader("# HELP nginx_up 1 when the last scrape read nginx's stub_status page, 0 when it failed (nginx down, or its configuration does not include the status server).\n# TYPE nginx_up gauge\nnginx_up 0\n"), "nginx_up"); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestHandler: /metrics carries nginx's metrics and the exporter's own Go and process
// metrics; /healthz answers whatever nginx does.
func TestHandler(t *testing.T) {
	srv, _ := stubNginx(t)
	logger := slog.New(slog.DiscardHandler)
	for name, url := range map[string]string{"nginx up": srv.URL + "/stub_status", "nginx down": srv.URL + "/missing"} {
		t.Run(name, func(t *testing.T) {
			h, err := Handler(NewCollector(url, time.Second, logger), logger)
			if err != nil {
				t.Fatal(err)
			}
			exporter := httptest.NewServer(h)
			defer exporter.Close()
			body := get(t, exporter.URL+"/metrics")
			wantUp := map[string]string{"nginx up": "nginx_up 1", "nginx down": "nginx_up 0"}[name]
			for _, want := range []string{wantUp, "go_goroutines ", "process_start_time_seconds "} {
				if !strings.Contains(body, want) {
					t.Errorf("/metrics lacks %q:\n%s", want, body)
				}
			}
			if name == "nginx up" && !strings.Contains(body, "nginx_http_requests_total 1") {
				t.Errorf("/metrics lacks the request counter:\n%s", body)
			}
			if got := get(t, exporter.URL+"/healthz"); got != "ok" {
				t.Errorf("/healthz: %q", got)
			}
		})
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(body)
}
