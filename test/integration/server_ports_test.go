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
	"net"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
	"github.com/example/nginx-operator/test/framework/testserver"
)

// TestStartBinaryServerMovesOnWhenItsPortIsTaken: the binary binds a port picked free
// before it starts, which another process can take first; startBinaryServer then starts
// it again on another port. (An in-process server is handed a listener bound already.)
func TestStartBinaryServerMovesOnWhenItsPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	handedOut := 0
	pickPort = func(t testing.TB) int {
		handedOut++
		if handedOut == 1 {
			return takenPort
		}
		return framework.MustFreePort(t)
	}
	defer func() { pickPort = framework.MustFreePort }()

	s := startBinaryServer(t, t.TempDir())
	if s.Port == takenPort || handedOut != 2 {
		t.Errorf("server on port %d after %d ports; want another port than the taken %d, on the second try", s.Port, handedOut, takenPort)
	}
}

// TestLaunchEndsWhenTheServerExits: a server that ends while starting (here on a flag it
// does not know) ends the wait for its readiness at once, with its exit, in this process
// and as the binary; the wait does not run into its timeout.
func TestLaunchEndsWhenTheServerExits(t *testing.T) {
	for _, binary := range []string{"", apiserverBinary} {
		start := time.Now()
		_, err := testserver.Launch(t, testserver.Options{Binary: binary, DataDir: t.TempDir(), Args: []string{"--no-such-flag"}})
		took := time.Since(start)
		t.Logf("binary %q: %s: %v", binary, took.Round(time.Millisecond), err)
		if !errors.Is(err, framework.ErrExited) || !strings.Contains(err.Error(), "no-such-flag") {
			t.Errorf("binary %q: error %v, want ErrExited with the unknown flag", binary, err)
		}
		if took > testserver.ReadyTimeout/2 {
			t.Errorf("binary %q: the wait took %s after the server ended", binary, took)
		}
	}
}
