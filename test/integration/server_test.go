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

// Package integration runs the real apiserver binary in standalone mode on embedded
// etcd and talks to it over HTTPS with the generated clientset and raw HTTP.
package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

var apiserverBinary string

// builtVersion is stamped into the binary the way a release build does, so the tests
// see it come back from --version and /version.
const builtVersion = "v0.1.7-integration.1"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nginx-operator-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	apiserverBinary = filepath.Join(dir, "apiserver")
	if err := framework.BuildProduct(filepath.Join("..", ".."), apiserverBinary, "./cmd/apiserver",
		"-X github.com/example/nginx-operator/pkg/version.gitVersion="+builtVersion); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if shared.server != nil {
		shared.server.stop()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// shared is the server of the tests that need a plain one and nothing of their own: each
// works in a namespace of its own (namespaceFor), so they neither see nor wait for each
// other, and the suite starts one server for them instead of one each.
var shared struct {
	once   sync.Once
	server *server
	err    error
}

// sharedServer returns the shared server, started by the first test that asks, as seen
// by t; TestMain stops it.
func sharedServer(t *testing.T) *server {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "nginx-operator-integration-shared-")
		if err != nil {
			shared.err = err
			return
		}
		shared.server, shared.err = startServerRetrying(t, dir, nil)
	})
	if shared.err != nil {
		t.Fatalf("the shared apiserver: %v", shared.err)
	}
	view := *shared.server
	view.t = t
	return &view
}

// namespaceFor is a namespace of t's own on a shared server: standalone mode has no
// namespace objects, so any valid name serves.
func namespaceFor(t *testing.T) string {
	name := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	name = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, name)
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.Trim(name, "-")
}

// server is one apiserver process serving a data directory.
type server struct {
	t       testing.TB
	dataDir string
	port    int
	proc    *framework.Process
	config  *rest.Config
	client  *clientset.Clientset
}

// startServer starts the apiserver in standalone mode on a free loopback port, with
// extraArgs, and waits until it is ready. A port picked free can be taken by another
// process before the server binds it (suites run in parallel); then it starts again
// on another port.
func startServer(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	s, err := startServerRetrying(t, dataDir, extraArgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// startServerRetrying starts a server, on another port while the one picked was taken;
// the caller stops it.
func startServerRetrying(t testing.TB, dataDir string, extraArgs []string) (*server, error) {
	t.Helper()
	const attempts = 5
	for attempt := 1; ; attempt++ {
		s, err := tryStartServer(t, dataDir, extraArgs)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == attempts {
			return s, err
		}
		t.Logf("attempt %d: %v; starting again on another port", attempt, err)
	}
}

var errPortTaken = errors.New("the port was taken before the apiserver could bind it")

// tryStartServer starts one server and waits until it is ready; when it is not, the
// process is stopped and the error says why.
func tryStartServer(t testing.TB, dataDir string, extraArgs []string) (*server, error) {
	t.Helper()
	s := &server{t: t, dataDir: dataDir, port: pickPort(t)}
	argv := append([]string{apiserverBinary, "--standalone", "--data-dir", dataDir,
		"--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(s.port)}, extraArgs...)
	proc, err := framework.StartProcess(filepath.Join(dataDir, fmt.Sprintf("apiserver-%d.log", s.port)), argv...)
	if err != nil {
		return nil, err
	}
	s.proc = proc

	started := time.Now()
	deadline := started.Add(90 * time.Second)
	for {
		if err := s.loadClients(); err == nil {
			if body, err := s.client.RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background()); err == nil && string(body) == "ok" {
				t.Logf("apiserver ready on port %d after %s", s.port, time.Since(started).Round(time.Millisecond))
				return s, nil
			}
		}
		select {
		case <-proc.Exited():
			log := proc.Log()
			if strings.Contains(log, "bind: address already in use") {
				return nil, fmt.Errorf("port %d: %w", s.port, errPortTaken)
			}
			return nil, fmt.Errorf("apiserver exited early; log: %s", log)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("apiserver not ready within 90s; log: %s", proc.Log())
		}
	}
}

// loadClients reads the kubeconfig this server writes, once it names this server's
// port: one left by an earlier server on the same data directory points elsewhere.
func (s *server) loadClients() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.dataDir, "kubeconfig"))
	if err != nil {
		return err
	}
	if want := s.url(""); cfg.Host != want {
		return fmt.Errorf("kubeconfig points at %s, not yet at %s", cfg.Host, want)
	}
	cfg.Timeout = 30 * time.Second
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	s.config, s.client = cfg, client
	return nil
}

// stop terminates the process it started, by PID, and waits for it.
func (s *server) stop() { s.proc.Stop(os.Interrupt, 30*time.Second) }

func (s *server) url(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", s.port, path)
}

// httpClient authenticates with the admin certificate unless anonymous is set.
func (s *server) httpClient(anonymous bool) *http.Client {
	cfg := rest.CopyConfig(s.config)
	if anonymous {
		cfg = rest.AnonymousClientConfig(cfg)
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// pickPort is where servers get their port; a test replaces it to hand out a taken one.
var pickPort = framework.MustFreePort
