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

package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// etcdBinary is the etcd that `make tools` builds, named by ETCD_BIN in
// ${TOOLS_BIN_DIR:-<repo>/hack/tools/bin}/env.sh, as hack/local-up.sh reads it.
func etcdBinary(t testing.TB) string {
	t.Helper()
	return framework.ToolBinary(t, "ETCD_BIN")
}

// etcdServer is a single-member etcd process on loopback with its own data directory.
// It can be killed and started again on the same directory and ports, as an etcd pod
// restarted by its kubelet would be.
type etcdServer struct {
	t                    testing.TB
	binary, dataDir      string
	clientPort, peerPort int
	proc                 *framework.Process
	logFile              string
	extraArgs            []string
}

// startEtcd starts an etcd with extraArgs on free loopback ports and waits until it is
// healthy; it is stopped when the test ends.
func startEtcd(t testing.TB, extraArgs ...string) *etcdServer {
	t.Helper()
	e := &etcdServer{t: t, binary: etcdBinary(t), dataDir: t.TempDir(), extraArgs: extraArgs}
	t.Cleanup(e.stop)
	err := framework.RetryOnPortTaken(5, t.Logf, func() error {
		e.clientPort, e.peerPort = framework.MustFreePort(t), framework.MustFreePort(t)
		return e.launch()
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// restart starts etcd again on the same data directory and ports after kill. The ports
// were just released by the killed process; should another process have taken one
// meanwhile, it tries again for a while.
func (e *etcdServer) restart() {
	e.t.Helper()
	var err error
	framework.Poll(time.Minute, time.Second, func() bool {
		err = e.launch()
		return !errors.Is(err, framework.ErrPortTaken)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *etcdServer) clientURL() string { return fmt.Sprintf("http://127.0.0.1:%d", e.clientPort) }

func (e *etcdServer) launch() error {
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", e.peerPort)
	e.logFile = filepath.Join(e.dataDir, fmt.Sprintf("etcd-%d.log", time.Now().UnixNano()))
	proc, err := framework.StartProcess(e.logFile, append([]string{e.binary,
		"--name", "faults",
		"--data-dir", filepath.Join(e.dataDir, "data"),
		"--listen-client-urls", e.clientURL(), "--advertise-client-urls", e.clientURL(),
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "faults=" + peerURL,
		"--log-level", "warn"}, e.extraArgs...)...)
	if err != nil {
		return err
	}
	e.proc = proc
	if err := proc.WaitUntil(time.Minute, 100*time.Millisecond, e.healthy); err != nil {
		if errors.Is(err, framework.ErrPortTaken) {
			return fmt.Errorf("etcd ports %d/%d: %w", e.clientPort, e.peerPort, err)
		}
		return fmt.Errorf("etcd not healthy: %w; log:\n%s", err, proc.Log())
	}
	return nil
}

// healthy is etcd's own /health: true once it has a leader and serves reads.
func (e *etcdServer) healthy() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.clientURL()+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var health struct {
		Health string `json:"health"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&health) == nil && health.Health == "true"
}

// kill sends SIGKILL to the etcd process, by PID, and waits for it to be gone.
func (e *etcdServer) kill() {
	if err := e.proc.Kill(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *etcdServer) stop() { e.proc.Stop(syscall.SIGTERM, 30*time.Second) }

// etcdctl runs the etcdctl of `make tools` against this etcd, as docs/operations.md has an
// administrator run it, and returns its standard output.
func (e *etcdServer) etcdctl(args ...string) string {
	e.t.Helper()
	out, err := e.tryEtcdctl(args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// tryEtcdctl is etcdctl for a command that may fail; the error holds etcdctl's stderr.
func (e *etcdServer) tryEtcdctl(args ...string) (string, error) {
	e.t.Helper()
	cmd := exec.Command(framework.ToolBinary(e.t, "ETCDCTL_BIN"), append([]string{"--endpoints", e.clientURL(), "--command-timeout=2m"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), fmt.Errorf("etcdctl %s: %w: %s", strings.Join(args, " "), err, exit.Stderr)
		}
		return string(out), fmt.Errorf("etcdctl %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// metric returns the value of a series of etcd's /metrics.
func (e *etcdServer) metric(series string) float64 {
	e.t.Helper()
	resp, err := http.Get(e.clientURL() + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := framework.ParseMetrics(body)
	if err != nil {
		e.t.Fatal(err)
	}
	v, err := m.Sum(series)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// etcdSize is what `etcdctl endpoint status` reports of the database.
type etcdSize struct {
	Revision int64
	// Size is the database file; InUse the part of it holding live data and the history
	// not yet compacted. A defragmentation shrinks Size to about InUse.
	Size, InUse int64
}

func (s etcdSize) String() string {
	return fmt.Sprintf("revision %d, file %.1f MiB, in use %.1f MiB", s.Revision, float64(s.Size)/(1<<20), float64(s.InUse)/(1<<20))
}

func (e *etcdServer) size() etcdSize {
	e.t.Helper()
	var status []struct {
		Status struct {
			Header struct {
				Revision int64 `json:"revision"`
			} `json:"header"`
			DBSize      int64 `json:"dbSize"`
			DBSizeInUse int64 `json:"dbSizeInUse"`
		} `json:"Status"`
	}
	out := e.etcdctl("endpoint", "status", "-w", "json")
	if err := json.Unmarshal([]byte(out), &status); err != nil || len(status) != 1 {
		e.t.Fatalf("etcdctl endpoint status: %v: %s", err, out)
	}
	st := status[0].Status
	return etcdSize{Revision: st.Header.Revision, Size: st.DBSize, InUse: st.DBSizeInUse}
}
