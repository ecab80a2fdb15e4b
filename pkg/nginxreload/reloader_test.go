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
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"net/http"
	"net/http/httptest"
)

// The test binary doubles as a fake nginx: run with fakeRoleEnv set, it is a master or
// a worker process, named as nginx names them (argv[0], which /proc/<pid>/cmdline shows).
const (
	fakeRoleEnv = "NGINXRELOAD_FAKE_NGINX"
	fakeDirEnv  = "NGINXRELOAD_FAKE_DIR"
	fakeEmerg   = `2026/11/26 10:00:00 [emerg] 7#7: unknown directive "foo" in /etc/nginx/nginx-operator-config/nginx.conf:3`
)

func TestMain(m *testing.M) {
	switch os.Getenv(fakeRoleEnv) {
	case "master":
		os.Exit(fakeMaster(os.Getenv(fakeDirEnv)))
	case "worker":
		fakeWorker()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func startFake(role, dir string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	title := map[string]string{"master": "nginx: master process fake", "worker": "nginx: worker process"}[role]
	cmd := &exec.Cmd{Path: exe, Args: []string{title}, Stderr: os.Stderr,
		Env: append(os.Environ(), fakeRoleEnv+"="+role, fakeDirEnv+"="+dir)}
	if role == "worker" {
		// A worker outlives no master, whatever kills it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	return cmd, cmd.Start()
}

// fakeMaster runs one worker. On SIGHUP it notes the signal in dir/hups and reads
// dir/verdict: "ok" replaces its worker with a new one, as nginx does when it takes a
// configuration; "bad" logs why not to dir/error.log, as nginx does when it keeps its own.
func fakeMaster(dir string) int {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGHUP, syscall.SIGTERM)
	worker, err := startFake("worker", dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake master:", err)
		return 1
	}
	for sig := range signals {
		if sig == syscall.SIGTERM {
			stopWorker(worker)
			return 0
		}
		appendTo(filepath.Join(dir, "hups"), "hup\n")
		verdict, _ := os.ReadFile(filepath.Join(dir, "verdict"))
		switch strings.TrimSpace(string(verdict)) {
		case "ok":
			next, err := startFake("worker", dir)
			if err != nil {
				fmt.Fprintln(os.Stderr, "fake master:", err)
				return 1
			}
			stopWorker(worker)
			worker = next
		case "bad":
			appendTo(filepath.Join(dir, "error.log"), fakeEmerg+"\n")
		}
	}
	return 0
}

func stopWorker(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
}

func appendTo(path, text string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake master:", err)
		return
	}
	_, _ = f.WriteString(text)
	_ = f.Close()
}

// fakeWorker waits for its end.
func fakeWorker() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
}

// startFakeNginx starts a fake master in dir and waits for its first worker; every
// process is stopped by its PID when the test ends.
func startFakeNginx(t *testing.T, dir string) int {
	t.Helper()
	master, err := startFake("master", dir)
	if err != nil {
		t.Fatal(err)
	}
	pid := master.Process.Pid
	t.Cleanup(func() {
		// The workers first, while the master has not reaped them: their PIDs are
		// still theirs.
		ws, _ := workers(DefaultProcRoot, pid)
		for _, w := range ws {
			_ = syscall.Kill(w, syscall.SIGKILL)
		}
		_ = master.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = master.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = master.Process.Kill()
			<-done
		}
	})
	waitFor(t, "the fake master's first worker", func() bool {
		ws, _ := workers(DefaultProcRoot, pid)
		return len(ws) == 1
	})
	return pid
}

// waitFor polls cond until it holds; the limit is generous, never the test's measure.
func waitFor(t *testing.T, what string, cond func() bool) {
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

// startReloader runs r until the test ends.
func startReloader(t *testing.T, r *Reloader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitFor(t, "the reloader's first look", func() bool { return r.pollCount() > 0 })
}

func (r *Reloader) pollCount() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.polls
}

// waitPolls waits for n whole looks after now: whatever they were to do is done.
func waitPolls(t *testing.T, r *Reloader, n int64) {
	t.Helper()
	from := r.pollCount()
	waitFor(t, fmt.Sprintf("%d looks of the reloader", n), func() bool { return r.pollCount() >= from+n+1 })
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	// Renamed into place, as the kubelet does: no read sees half of it.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func countHups(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "hups"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "hup\n")
}

// syncBuffer is a bytes.Buffer that the reloader writes while the test reads.
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

func metricsText(state reload.State, last int) string {
	return fmt.Sprintf(`
# HELP nginx_config_last_reload_successful 1 when nginx took the configuration of the last reload the exporter asked for, or none was asked for yet; 0 when it kept its previous configuration.
# TYPE nginx_config_last_reload_successful gauge
nginx_config_last_reload_successful %d
# HELP nginx_config_loaded_info Always 1; hash names the content nginx runs: the first 16 hex digits of the SHA-256 of the volume=hash pairs /reload reports as loaded (empty when not known).
# TYPE nginx_config_loaded_info gauge
nginx_config_loaded_info{hash=%q} 1
# HELP nginx_config_reloads_total Reloads of nginx's configuration the exporter asked for (a SIGHUP once the volumes held new content), by result: success when nginx started new workers, failure when it kept its configuration.
# TYPE nginx_config_reloads_total counter
nginx_config_reloads_total{result="failure"} %d
nginx_config_reloads_total{result="success"} %d
`, last, LoadedHash(state.Loaded), state.Failures, state.Reloads-state.Failures)
}

// TestReloadEndToEnd runs the Reloader against a fake nginx, a real process found in the
// real /proc and signalled for real: nothing happens while the volumes hold what nginx
// runs or not yet what is asked for; new content that nginx takes becomes Loaded; content
// nginx refuses is Rejected with nginx's reason and not tried again; the next new
// content is.
func TestReloadEndToEnd(t *testing.T) {
	dir := t.TempDir()
	content := filepath.Join(dir, "content")
	vol := newKubeletVolume(t, filepath.Join(content, "config"))
	v1 := map[string]string{"nginx.conf": "events {}\n"}
	vol.publish(v1)
	desiredFile := filepath.Join(dir, "content-hashes")
	master := startFakeNginx(t, dir)
	var nginxLog syncBuffer
	r := &Reloader{
		ContentDir:   content,
		DesiredFile:  desiredFile,
		ErrorLog:     filepath.Join(dir, "error.log"),
		LogOut:       &nginxLog,
		AcceptMaster: func(pid int) bool { return pid == master },
		Interval:     5 * time.Millisecond,
		Timeout:      30 * time.Second,
	}
	startReloader(t, r)
	check := func(step string, want reload.State, hups int, last int) {
		t.Helper()
		if got := r.State(); got != want {
			t.Errorf("%s: state\n %+v\nwant\n %+v", step, got, want)
		}
		if got := countHups(t, dir); got != hups {
			t.Errorf("%s: nginx got %d SIGHUPs, want %d", step, got, hups)
		}
		if err := testutil.CollectAndCompare(r, strings.NewReader(metricsText(want, last))); err != nil {
			t.Errorf("%s: metrics: %v", step, err)
		}
	}
	h1 := "config=" + hashOf(v1)
	check("start, nothing asked for", reload.State{Loaded: h1}, 0, 1)

	// The controller asks for what nginx started with.
	writeFile(t, desiredFile, h1)
	waitFor(t, "desired read", func() bool { return r.State().Desired == h1 })
	waitPolls(t, r, 2)
	check("what nginx runs asked for", reload.State{Desired: h1, Mounted: h1, Loaded: h1}, 0, 1)

	// New content, mounted and asked for: nginx takes it.
	if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	v2 := map[string]string{"nginx.conf": "events {}\nhttp {}\n"}
	h2 := "config=" + hashOf(v2)
	vol.publish(v2)
	writeFile(t, desiredFile, h2)
	waitFor(t, "the reload of v2", func() bool { return r.State().Reloads == 1 })
	check("v2 taken", reload.State{Desired: h2, Mounted: h2, Loaded: h2, Reloads: 1}, 1, 1)

	// Asked for before the kubelet refreshed the volume: no SIGHUP.
	v3 := map[string]string{"nginx.conf": "events {}\nhttp { foo; }\n"}
	h3 := "config=" + hashOf(v3)
	writeFile(t, desiredFile, h3)
	waitFor(t, "desired v3 read", func() bool { return r.State().Desired == h3 })
	waitPolls(t, r, 3)
	check("v3 asked for, v2 mounted", reload.State{Desired: h3, Mounted: h2, Loaded: h2, Reloads: 1}, 1, 1)

	// Mounted now, and nginx refuses it.
	if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte("bad"), 0o644); err != nil {
		t.Fatal(err)
	}
	vol.publish(v3)
	waitFor(t, "the reload of v3", func() bool { return r.State().Reloads == 2 })
	refused := reload.State{Desired: h3, Mounted: h3, Loaded: h2, Rejected: h3,
		Message: `[emerg] unknown directive "foo" in /etc/nginx/nginx-operator-config/nginx.conf:3`, Reloads: 2, Failures: 1}
	check("v3 refused", refused, 2, 0)
	if !strings.Contains(nginxLog.String(), fakeEmerg+"\n") {
		t.Errorf("nginx's error was not copied to the sidecar's log: %q", nginxLog.String())
	}
	// Not tried again while v3 is what is asked for.
	waitPolls(t, r, 5)
	check("v3 still asked for", refused, 2, 0)

	// The next content is tried, and a success clears the refusal.
	if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	v4 := map[string]string{"nginx.conf": "events {}\nhttp { server {} }\n", "mime.types": "types {}\n"}
	h4 := "config=" + hashOf(v4)
	vol.publish(v4)
	writeFile(t, desiredFile, h4)
	waitFor(t, "the reload of v4", func() bool { return r.State().Reloads == 3 })
	check("v4 taken", reload.State{Desired: h4, Mounted: h4, Loaded: h4, Reloads: 3, Failures: 1}, 3, 1)
}

// TestReloadWithoutErrorLog: without the error log only a new worker tells success; a
// refusal shows as none within Timeout, and the message says where the reason is.
func TestReloadWithoutErrorLog(t *testing.T) {
	dir := t.TempDir()
	content := filepath.Join(dir, "content")
	vol := newKubeletVolume(t, filepath.Join(content, "config"))
	vol.publish(map[string]string{"nginx.conf": "one"})
	if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte("bad"), 0o644); err != nil {
		t.Fatal(err)
	}
	master := startFakeNginx(t, dir)
	r := &Reloader{ContentDir: content, DesiredFile: filepath.Join(dir, "content-hashes"),
		AcceptMaster: func(pid int) bool { return pid == master }, Interval: 5 * time.Millisecond, Timeout: 100 * time.Millisecond}
	startReloader(t, r)
	two := map[string]string{"nginx.conf": "two"}
	vol.publish(two)
	writeFile(t, r.DesiredFile, "config="+hashOf(two))
	waitFor(t, "the reload", func() bool { return r.State().Reloads == 1 })
	want := "nginx started no new worker within 100ms of SIGHUP: nginx kept its configuration; its log says why"
	if s := r.State(); s.Failures != 1 || s.Message != want || s.Rejected != "config="+hashOf(two) {
		t.Errorf("state %+v, want a failure with %q", s, want)
	}
}

// TestReloadNoMaster: no nginx master to signal is a failure that says so.
func TestReloadNoMaster(t *testing.T) {
	dir := t.TempDir()
	content := filepath.Join(dir, "content")
	r := &Reloader{ContentDir: content, DesiredFile: filepath.Join(dir, "content-hashes"),
		ProcRoot: fakeProc(t, map[int]proc{1: {"/pause\x00", 0}}), Interval: 5 * time.Millisecond}
	startReloader(t, r)
	if s := r.State(); s.Loaded != "" {
		t.Fatalf("no volume at start: loaded %q", s.Loaded)
	}
	files := map[string]string{"nginx.conf": "one"}
	writeFile(t, r.DesiredFile, "config="+hashOf(files))
	waitPolls(t, r, 2)
	if s := r.State(); s.Desired != "config="+hashOf(files) || s.Mounted != "" || s.Reloads != 0 {
		t.Fatalf("asked for a volume not mounted yet: state %+v", s)
	}
	newKubeletVolume(t, filepath.Join(content, "config")).publish(files)
	waitFor(t, "the reload", func() bool { return r.State().Reloads == 1 })
	if s := r.State(); s.Failures != 1 || s.Message != "nginx's master process not found" {
		t.Errorf("state %+v", s)
	}
}

// TestDesiredUnreadable: a desired file that is not volume=hash pairs asks for nothing.
func TestDesiredUnreadable(t *testing.T) {
	dir := t.TempDir()
	content := filepath.Join(dir, "content")
	newKubeletVolume(t, filepath.Join(content, "config")).publish(map[string]string{"nginx.conf": "one"})
	r := &Reloader{ContentDir: content, DesiredFile: filepath.Join(dir, "content-hashes"),
		ProcRoot: t.TempDir(), Interval: 5 * time.Millisecond}
	writeFile(t, r.DesiredFile, "config=abc config=def ../etc=123")
	startReloader(t, r)
	waitPolls(t, r, 2)
	if s := r.State(); s.Desired != "" || s.Mounted != "" || s.Reloads != 0 {
		t.Errorf("state %+v", s)
	}
	writeFile(t, r.DesiredFile, "../etc=123")
	waitPolls(t, r, 2)
	if s := r.State(); s.Desired != "../etc=123" || s.Mounted != "" || s.Reloads != 0 {
		t.Errorf("a volume name out of the content directory: state %+v", s)
	}
}

// TestStagedPodReloadsForItsIncludeAndChecksHealth: on a pod of a staged reload, the
// include file counts as a volume, so a pod moved to the other configuration reloads
// although no volume changed; after the reload the health path's answer is reported for
// the content loaded.
func TestStagedPodReloadsForItsIncludeAndChecksHealth(t *testing.T) {
	dir := t.TempDir()
	content := filepath.Join(dir, "content")
	vol := newKubeletVolume(t, filepath.Join(content, "config"))
	files := map[string]string{"nginx.conf": "events {}\n", "candidate.conf": "events {}\nhttp {}\n"}
	vol.publish(files)
	include := filepath.Join(dir, "nginx-include")
	writeFile(t, include, "include nginx.conf;\n")
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	defer health.Close()
	desiredFile := filepath.Join(dir, "content-hashes")
	master := startFakeNginx(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Reloader{ContentDir: content, DesiredFile: desiredFile, IncludeFile: include, HealthURL: health.URL,
		HealthDelay: time.Millisecond, ErrorLog: filepath.Join(dir, "error.log"),
		AcceptMaster: func(pid int) bool { return pid == master }, Interval: 5 * time.Millisecond, Timeout: 30 * time.Second}
	startReloader(t, r)
	includeHash := func(text string) string {
		return reload.ContentHash(map[string][]byte{reload.IncludeVolume: []byte(text)})
	}
	stable := reload.FormatContentHashes(map[string]string{"config": hashOf(files), reload.IncludeVolume: includeHash("include nginx.conf;\n")})
	if got := r.State().Loaded; got != stable {
		t.Fatalf("loaded at start %q; want the volumes and the include file, %q", got, stable)
	}
	// The pod is moved to the candidate: only the include file changes.
	writeFile(t, include, "include candidate.conf;\n")
	canary := reload.FormatContentHashes(map[string]string{"config": hashOf(files), reload.IncludeVolume: includeHash("include candidate.conf;\n")})
	writeFile(t, desiredFile, canary)
	waitFor(t, "the reload for the include file", func() bool { return r.State().Loaded == canary })
	waitFor(t, "the health path's answer", func() bool { h := r.State().Health; return h != nil && h.Content == canary })
	if h := r.State().Health; h.Code != http.StatusInternalServerError || !h.Failed() {
		t.Errorf("health %+v; want the 500 reported as a failure", h)
	}
}
