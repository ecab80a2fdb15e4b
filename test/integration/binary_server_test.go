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

package integration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// startBinaryServer starts the built apiserver binary in standalone mode, on its embedded
// etcd and a free loopback port, with extraArgs, and waits until it is ready; t's cleanup
// stops it. It is for tests whose subject is the process: what the release build stamps,
// flags that act on the whole process, its log. A port picked free can be taken by
// another process before the binary binds it (suites run in parallel); then it starts
// again on another port.
func startBinaryServer(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	return startBinaryServerOf(t, apiserverBinary, dataDir, extraArgs...)
}

// startBinaryServerOf is startBinaryServer for another build of the apiserver, such as
// the previous release's.
func startBinaryServerOf(t testing.TB, binary, dataDir string, extraArgs ...string) *server {
	t.Helper()
	const attempts = 5
	for attempt := 1; ; attempt++ {
		s, err := tryStartBinary(t, binary, dataDir, extraArgs)
		if err == nil {
			t.Cleanup(s.stop)
			return s
		}
		if !errors.Is(err, errPortTaken) || attempt == attempts {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %v; starting again on another port", attempt, err)
	}
}

var errPortTaken = errors.New("the port was taken before the apiserver could bind it")

// tryStartBinary starts the binary once and waits until it is ready; when it is not,
// the process is stopped and the error says why.
func tryStartBinary(t testing.TB, binary, dataDir string, extraArgs []string) (*server, error) {
	t.Helper()
	s := &server{t: t, dataDir: dataDir, port: pickPort(t)}
	argv := append([]string{binary, "--standalone", "--data-dir", dataDir,
		"--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(s.port)}, extraArgs...)
	proc, err := framework.StartProcess(filepath.Join(dataDir, fmt.Sprintf("apiserver-%d.log", s.port)), argv...)
	if err != nil {
		return nil, err
	}
	s.running = proc.Running
	// Stopped by its PID, never by name.
	s.shutdown = func() error { proc.Stop(os.Interrupt, 30*time.Second); return nil }
	if err := s.waitReady(proc.Exited()); err != nil {
		_ = s.shutdown()
		log := proc.Log()
		if errors.Is(err, errEnded) && strings.Contains(log, "bind: address already in use") {
			return nil, fmt.Errorf("port %d: %w", s.port, errPortTaken)
		}
		return nil, fmt.Errorf("%w; log: %s", err, log)
	}
	return s, nil
}

// pickPort is where binaries get their port; a test replaces it to hand out a taken one.
var pickPort = framework.MustFreePort
