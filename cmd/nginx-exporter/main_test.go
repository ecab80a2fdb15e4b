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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/nginxreload"
)

// syncBuffer is a bytes.Buffer that the exporter writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start runs the exporter on a free port until the test ends; run must return nil then.
func start(t *testing.T, cfg config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() { errs <- run(ctx, ln, cfg, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errs; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// poll retries cond until it holds, within a generous limit.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// TestRunWithReload: with --reload-content-dir the exporter serves /reload and the
// nginx_config_* metrics, and copies nginx's error log; with --stub-status-url="" it
// exports no stub_status metric.
func TestRunWithReload(t *testing.T) {
	dir := t.TempDir()
	content := filepath.Join(dir, "content")
	if err := os.MkdirAll(filepath.Join(content, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(content, "config", "nginx.conf"), []byte("events {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	errorLog := filepath.Join(dir, "error.log")
	line := "2026/11/26 10:00:00 [warn] 7#7: a warning of nginx's\n"
	if err := os.WriteFile(errorLog, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	var nginxLog syncBuffer
	url := start(t, config{
		reloadContentDir:  content,
		reloadDesiredFile: filepath.Join(dir, "content-hashes"),
		reloadErrorLog:    errorLog,
		reloadInterval:    5 * time.Millisecond,
		reloadTimeout:     time.Second,
		nginxLog:          &nginxLog,
	})
	want := "config=" + reload.ContentHash(map[string][]byte{"nginx.conf": []byte("events {}\n")})
	var state reload.State
	poll(t, "/reload to report what nginx started with", func() bool {
		code, body := get(t, url+reload.StatePath)
		return code == http.StatusOK && json.Unmarshal([]byte(body), &state) == nil && state.Loaded == want
	})
	code, metrics := get(t, url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{`nginx_config_reloads_total{result="success"} 0`, "nginx_config_last_reload_successful 1",
		`nginx_config_loaded_info{hash="` + nginxreload.LoadedHash(want) + `"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
	if strings.Contains(metrics, "nginx_up") {
		t.Errorf("--stub-status-url=\"\" still exports nginx_up:\n%s", metrics)
	}
	poll(t, "nginx's error log copied", func() bool { return nginxLog.String() == line })
}

// TestRunWithoutReload: reload in place is off by default: no /reload, no nginx_config_*.
func TestRunWithoutReload(t *testing.T) {
	url := start(t, config{stubStatusURL: "http://127.0.0.1:1/stub_status", timeout: time.Second})
	if code, _ := get(t, url+reload.StatePath); code != http.StatusNotFound {
		t.Errorf("/reload: %d, want 404", code)
	}
	code, metrics := get(t, url+"/metrics")
	if code != http.StatusOK || strings.Contains(metrics, "nginx_config_") || !strings.Contains(metrics, "nginx_up 0") {
		t.Errorf("/metrics: %d\n%s", code, metrics)
	}
}
