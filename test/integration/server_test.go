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
	os.RemoveAll(dir)
	os.Exit(code)
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
	const attempts = 5
	for attempt := 1; ; attempt++ {
		s, err := tryStartServer(t, dataDir, extraArgs)
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) || attempt == attempts {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %v; starting again on another port", attempt, err)
	}
}

var errPortTaken = errors.New("the port was taken before the apiserver could bind it")

func tryStartServer(t testing.TB, dataDir string, extraArgs []string) (*server, error) {
	t.Helper()
	s := &server{t: t, dataDir: dataDir, port: pickPort(t)}
	argv := append([]string{apiserverBinary, "--standalone", "--data-dir", dataDir,
		"--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(s.port)}, extraArgs...)
	proc, err := framework.StartProcess(filepath.Join(dataDir, fmt.Sprintf("apiserver-%d.log", s.port)), argv...)
	if err != nil {
		t.Fatal(err)
	}
	s.proc = proc
	t.Cleanup(s.stop)

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
