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
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/example/nginx-operator/test/framework/testserver"
)

// apiserverBinary is built once for the package by TestMain.
var apiserverBinary string

// ns is where the tests create their objects; standalone mode needs no Namespace object.
const ns = "default"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	binary, err := testserver.BuildBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	apiserverBinary = binary
	return m.Run()
}

// apiserver is one apiserver process in standalone mode on a data directory (its PKI,
// its kubeconfig and, without --etcd-servers, its embedded etcd), started by testserver.
// It can be killed and started again on the same data directory.
type apiserver struct {
	*testserver.Server
	t     testing.TB
	args  []string
	probe *http.Client // anonymous, as a kubelet probes
}

// startAPIServer starts an apiserver on dataDir with extraArgs and waits until it is
// ready; it is stopped when the test ends.
func startAPIServer(t testing.TB, dataDir string, extraArgs ...string) *apiserver {
	t.Helper()
	s := &apiserver{t: t, args: extraArgs}
	s.start(dataDir)
	return s
}

// start launches the process on a free loopback port of dataDir and waits for /readyz.
func (s *apiserver) start(dataDir string) {
	s.t.Helper()
	s.Server = testserver.Start(s.t, testserver.Options{Binary: apiserverBinary, DataDir: dataDir, Args: s.args,
		// The load generators are the rate limit; client-go's default 5 QPS would hide the fault.
		ConfigureClient: func(cfg *rest.Config) { cfg.QPS, cfg.Burst = -1, 0 }})
	probe, err := rest.HTTPClientFor(rest.AnonymousClientConfig(s.Config))
	if err != nil {
		s.t.Fatal(err)
	}
	// The readinessProbe's timeoutSeconds in artifacts/deploy/30-apiserver.yaml: an answer
	// slower than that is a failed probe to the kubelet.
	probe.Timeout = 5 * time.Second
	s.probe = probe
}

// restart starts the server again on its data directory after kill, on another port.
func (s *apiserver) restart() { s.t.Helper(); s.start(s.DataDir) }

// ready asks /readyz?verbose anonymously, as a kubelet probe would, and returns its
// failed checks when it is not ok.
func (s *apiserver) ready(ctx context.Context) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL("/readyz?verbose"), nil)
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

// kill sends SIGKILL to the process it started, by PID, and waits for it to be gone.
func (s *apiserver) kill() {
	if err := s.Kill(); err != nil {
		s.t.Fatal(err)
	}
}

func readAll(r io.Reader) string {
	data, _ := io.ReadAll(r)
	return string(data)
}
