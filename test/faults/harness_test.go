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

// Package faults kills, restarts and overloads the real apiserver binary, run as local
// processes in standalone mode on its embedded etcd or on an external etcd process, and
// prints what each fault cost: acknowledged writes lost, recovery times, 429s.
package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

// apiserverBinary is built once for the package by TestMain.
var apiserverBinary string

// ns is where the tests create their objects; standalone mode needs no Namespace object.
const ns = "default"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "nginx-operator-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	apiserverBinary = filepath.Join(dir, "apiserver")
	if err := framework.BuildProduct(filepath.Join("..", ".."), apiserverBinary, "./cmd/apiserver"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// apiserver is one apiserver process in standalone mode on a data directory (its PKI,
// its kubeconfig and, without --etcd-servers, its embedded etcd). It can be killed and
// started again on the same data directory.
type apiserver struct {
	t       testing.TB
	dataDir string
	args    []string
	port    int
	proc    *framework.Process
	logFile string
	config  *rest.Config
	client  *clientset.Clientset
	probe   *http.Client // anonymous, as a kubelet probes
}

// startAPIServer starts an apiserver on dataDir with extraArgs and waits until it is
// ready; it is stopped when the test ends.
func startAPIServer(t testing.TB, dataDir string, extraArgs ...string) *apiserver {
	t.Helper()
	s := &apiserver{t: t, dataDir: dataDir, args: extraArgs}
	t.Cleanup(s.stop)
	t.Cleanup(s.logTailOnFailure)
	s.start()
	return s
}

// start launches the process on a free loopback port and waits for /readyz. A port
// found free can be taken by another process before the server binds it; then it
// starts again on another port.
func (s *apiserver) start() {
	s.t.Helper()
	const attempts = 5
	for attempt := 1; ; attempt++ {
		err := s.tryStart()
		if err == nil {
			return
		}
		if !errors.Is(err, errPortTaken) || attempt == attempts {
			s.t.Fatal(err)
		}
		s.t.Logf("attempt %d: %v; starting again on another port", attempt, err)
	}
}

var errPortTaken = errors.New("the port was taken before the process could bind it")

func (s *apiserver) tryStart() error {
	s.port = framework.MustFreePort(s.t)
	s.logFile = filepath.Join(s.dataDir, fmt.Sprintf("apiserver-%d.log", s.port))
	args := append([]string{"--standalone", "--data-dir", s.dataDir,
		"--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(s.port)}, s.args...)
	proc, err := framework.StartProcess(s.logFile, append([]string{apiserverBinary}, args...)...)
	if err != nil {
		return err
	}
	s.proc = proc

	started := time.Now()
	deadline := started.Add(2 * time.Minute)
	for {
		if err := s.loadClients(); err == nil {
			if ok, _ := s.ready(context.Background()); ok {
				s.t.Logf("apiserver (pid %d) ready on port %d after %s", s.pid(), s.port, time.Since(started).Round(time.Millisecond))
				return nil
			}
		}
		select {
		case <-proc.Exited():
			out := readFile(s.logFile)
			if strings.Contains(out, "address already in use") {
				return fmt.Errorf("port %d: %w", s.port, errPortTaken)
			}
			return fmt.Errorf("apiserver exited early; log:\n%s", out)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("apiserver not ready within 2m; log:\n%s", readFile(s.logFile))
		}
	}
}

// loadClients reads the admin kubeconfig the server writes, once it names this
// server's port: one left by an earlier run on the same data directory points elsewhere.
func (s *apiserver) loadClients() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.dataDir, "kubeconfig"))
	if err != nil {
		return err
	}
	if want := s.url(""); cfg.Host != want {
		return fmt.Errorf("kubeconfig points at %s, not yet at %s", cfg.Host, want)
	}
	cfg.Timeout = 30 * time.Second
	// The load generators are the rate limit; client-go's default 5 QPS would hide the fault.
	cfg.QPS, cfg.Burst = -1, 0
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	probe, err := rest.HTTPClientFor(rest.AnonymousClientConfig(cfg))
	if err != nil {
		return err
	}
	// The readinessProbe's timeoutSeconds in artifacts/deploy/30-apiserver.yaml: an answer
	// slower than that is a failed probe to the kubelet.
	probe.Timeout = 5 * time.Second
	s.config, s.client, s.probe = cfg, client, probe
	return nil
}

// ready asks /readyz?verbose anonymously, as a kubelet probe would, and returns its
// failed checks when it is not ok.
func (s *apiserver) ready(ctx context.Context) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url("/readyz?verbose"), nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := s.probe.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body := readAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return true, ""
	}
	var failed []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimPrefix(line, "[-]"))
		}
	}
	if len(failed) == 0 {
		return false, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(body))
	}
	return false, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.Join(failed, "; "))
}

func (s *apiserver) pid() int { return s.proc.PID() }

// kill sends SIGKILL to the process it started, by PID, and waits for it to be gone.
func (s *apiserver) kill() {
	if err := s.proc.Kill(); err != nil {
		s.t.Fatal(err)
	}
}

// stop ends the process gracefully, by PID, unless it is already gone.
func (s *apiserver) stop() { s.proc.Stop(os.Interrupt, 30*time.Second) }

// logTailOnFailure prints the end of the server's log when the test failed: the data
// directory, and the log with it, is removed afterwards.
func (s *apiserver) logTailOnFailure() {
	if !s.t.Failed() || s.logFile == "" {
		return
	}
	lines := strings.Split(strings.TrimSpace(readFile(s.logFile)), "\n")
	s.t.Logf("end of %s:\n%s", s.logFile, strings.Join(lines[max(0, len(lines)-40):], "\n"))
}

func (s *apiserver) url(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", s.port, path)
}

func readAll(r io.Reader) string {
	data, _ := io.ReadAll(r)
	return string(data)
}

func readFile(name string) string {
	data, _ := os.ReadFile(name)
	return string(data)
}
