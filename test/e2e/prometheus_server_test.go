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

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// prometheusServer is a real Prometheus (the machine's `prometheus` binary, Debian's
// package) running in its own temporary directory on a loopback port.
type prometheusServer struct {
	URL  string
	dir  string
	proc *framework.Process
}

// startPrometheus writes config (a prometheus.yml) into a new directory and starts
// Prometheus with its storage there. A port found free can be taken before Prometheus
// binds it, so a start that failed on a bind error is retried on a new port. The server
// is stopped by PID when the test ends.
func startPrometheus(t *testing.T, config string) *prometheusServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the prometheus binary is required in CI (Debian package prometheus; hack/install-deps.sh installs it): %v", err)
		}
		t.Skipf("prometheus not found (apt-get install prometheus, or make deps as root); skipping: %v", err)
	}
	dir := t.TempDir()
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		port := framework.MustFreePort(t)
		s := &prometheusServer{URL: fmt.Sprintf("http://127.0.0.1:%d", port), dir: dir}
		start := time.Now()
		proc, err := framework.StartProcess(filepath.Join(localDir, "logs", fmt.Sprintf("prometheus-%d.log", attempt)), bin,
			"--config.file="+configPath,
			"--storage.tsdb.path="+filepath.Join(dir, "data"),
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
			// The package's defaults point at /usr/share/prometheus; nothing here needs them.
			"--web.console.templates="+filepath.Join(dir, "consoles"),
			"--web.console.libraries="+filepath.Join(dir, "console_libraries"),
			"--log.level=info")
		if err != nil {
			t.Fatal(err)
		}
		s.proc = proc
		t.Cleanup(func() { s.stop(t) })

		client := &http.Client{Timeout: 2 * time.Second}
		err = s.proc.WaitUntil(time.Minute, 200*time.Millisecond, func() bool {
			resp, err := client.Get(s.URL + "/-/ready")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		switch {
		case err == nil:
			t.Logf("prometheus (pid %d) ready on %s in %s", s.proc.PID(), s.URL, time.Since(start).Round(time.Millisecond))
			return s
		case errors.Is(err, framework.ErrPortTaken) && attempt < 3:
			t.Logf("prometheus lost port %d to another process; retrying on a new port", port)
			continue
		default:
			t.Fatalf("prometheus did not become ready: %v; its log:\n%s", err, s.proc.Log())
		}
	}
}

// stop sends SIGTERM to the server's PID (Prometheus then flushes and exits) and
// SIGKILL when it has not exited after 30 s.
func (s *prometheusServer) stop(t *testing.T) {
	if s.proc.Stop(syscall.SIGTERM, 30*time.Second) {
		t.Errorf("prometheus (pid %d) ignored SIGTERM for 30 s; it was killed", s.proc.PID())
	}
}
