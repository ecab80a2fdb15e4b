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

// Package integration runs the apiserver in standalone mode, each on an etcd of its own,
// and talks to it over HTTPS with the generated clientset and raw HTTP. The apiserver
// runs in the test process, from the command's own flags (startServer); the built
// binary runs only where the process is the subject: its command line, exit codes,
// version stamp, process-wide flags (-v, --feature-gates) and log.
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
const builtVersion = "v0.2.7-integration.1"

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
		if err := shared.server.shutdown(); err != nil {
			fmt.Fprintf(os.Stderr, "the shared apiserver: %v\n", err)
			code = 1
		}
		os.RemoveAll(shared.server.dataDir)
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
		if shared.server, shared.err = startInProcess(t, dir, nil); shared.err != nil {
			os.RemoveAll(dir)
		}
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

// server is one apiserver serving a data directory: in this test process (startServer)
// or as the built binary (startBinaryServer).
type server struct {
	t       testing.TB
	dataDir string
	port    int
	config  *rest.Config
	client  *clientset.Clientset
	// etcdURL is the etcd of an in-process server, which the test started for it; the
	// binary's embedded etcd is its own and not known here.
	etcdURL string
	// shutdown stops the server and waits until it is gone; calling it again returns
	// what the first call did.
	shutdown func() error
	// running reports whether the server has not stopped.
	running func() bool
	// panicsBefore is handledPanics when an in-process server was ready.
	panicsBefore int64
}

// startServer starts the apiserver in this process in standalone mode, with extraArgs
// parsed by its command as the binary parses its command line, and waits until it is
// ready; t's cleanup stops it.
func startServer(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	s, err := startInProcess(t, dataDir, extraArgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// waitReady waits until s answers /readyz with ok through the kubeconfig it writes. It
// gives up when gone is closed (the server ended) or after 90 s.
func (s *server) waitReady(gone <-chan struct{}) error {
	started := time.Now()
	deadline := started.Add(90 * time.Second)
	for {
		if err := s.loadClients(); err == nil {
			if body, err := s.client.RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background()); err == nil && string(body) == "ok" {
				s.t.Logf("apiserver ready on port %d after %s", s.port, time.Since(started).Round(time.Millisecond))
				return nil
			}
		}
		select {
		case <-gone:
			return errEnded
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("apiserver not ready within 90s")
		}
	}
}

var errEnded = errors.New("the apiserver ended before it was ready")

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

// stop stops s and waits until it is gone; one that does not go fails the test.
func (s *server) stop() {
	if err := s.shutdown(); err != nil {
		s.t.Error(err)
	}
}

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
