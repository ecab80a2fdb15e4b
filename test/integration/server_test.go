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
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/example/nginx-operator/test/framework"
	"github.com/example/nginx-operator/test/framework/testserver"
)

var apiserverBinary string

// builtVersion is stamped into the binary the way a release build does, so the tests
// see it come back from --version and /version.
const builtVersion = "v0.2.7-integration.1"

func TestMain(m *testing.M) {
	binary, err := testserver.BuildBinary("-X github.com/example/nginx-operator/pkg/version.gitVersion=" + builtVersion)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	apiserverBinary = binary
	code := m.Run()
	if shared.server != nil {
		if err := shared.server.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "the shared apiserver: %v\n", err)
			code = 1
		}
		os.RemoveAll(shared.server.DataDir)
	}
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
		var s *testserver.Server
		if s, shared.err = testserver.Launch(t, testserver.Options{DataDir: dir}); shared.err != nil {
			os.RemoveAll(dir)
			return
		}
		shared.server = newServer(t, s)
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

// server is one apiserver serving a data directory, started by testserver: in this test
// process (startServer) or as the built binary (startBinaryServer), as t sees it.
type server struct {
	*testserver.Server
	t testing.TB
	// panicsBefore is handledPanics when the server was ready.
	panicsBefore int64
}

func newServer(t testing.TB, s *testserver.Server) *server {
	return &server{Server: s, t: t, panicsBefore: handledPanics.Load()}
}

// startServer starts the apiserver in this process in standalone mode, with extraArgs
// parsed by its command as the binary parses its command line, and waits until it is
// ready; t's cleanup stops it.
func startServer(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	return newServer(t, testserver.Start(t, testserver.Options{DataDir: dataDir, Args: extraArgs}))
}

// startBinaryServer starts the built apiserver binary in standalone mode, on its embedded
// etcd and a free loopback port, with extraArgs, and waits until it is ready; t's cleanup
// stops it. It is for tests whose subject is the process: what the release build stamps,
// flags that act on the whole process, its log.
func startBinaryServer(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	return startBinaryServerOf(t, apiserverBinary, dataDir, extraArgs...)
}

// startBinaryServerOf is startBinaryServer for another build of the apiserver, such as
// the previous release's.
func startBinaryServerOf(t testing.TB, binary, dataDir string, extraArgs ...string) *server {
	t.Helper()
	return newServer(t, testserver.Start(t, testserver.Options{Binary: binary, DataDir: dataDir, Args: extraArgs, PickPort: pickPort}))
}

// pickPort is where binaries get their port; a test replaces it to hand out a taken one.
var pickPort = framework.MustFreePort

// stop stops s and waits until it is gone; one that does not go fails the test.
func (s *server) stop() {
	if err := s.Stop(); err != nil {
		s.t.Error(err)
	}
}

// httpClient authenticates with the admin certificate unless anonymous is set.
func (s *server) httpClient(anonymous bool) *http.Client {
	cfg := rest.CopyConfig(s.Config)
	if anonymous {
		cfg = rest.AnonymousClientConfig(cfg)
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}
