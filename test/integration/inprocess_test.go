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
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"

	apiserver "github.com/example/nginx-operator/pkg/cmd/server"
	"github.com/example/nginx-operator/pkg/embeddedetcd"
)

// startInProcess runs the apiserver command in this process, as kube's integration tests
// run kube-apiserver and sample-apiserver: the listener is bound before the server starts
// (no free-port race) and handed to it, the command parses --standalone, --data-dir, the
// port, an etcd of the server's own and extraArgs with its own flags, then completes,
// validates and runs the options as the binary does. It returns once /readyz answers ok
// through the kubeconfig the server wrote; the caller stops it (shutdown: cancel, then
// wait for the command to return, then stop its etcd).
//
// The etcd is started here, in dataDir as the binary's embedded one (so data outlives
// a restart on the same directory), so that tests can read it (etcdURL).
func startInProcess(t testing.TB, dataDir string, extraArgs []string) (*server, error) {
	t.Helper()
	for _, arg := range extraArgs {
		// The libraries read their feature gates from one process-wide gate: on a server
		// in this process the flag would only half apply, or reach every server.
		if strings.HasPrefix(arg, "--feature-gates") {
			return nil, fmt.Errorf("%s acts on the whole process: test it with startBinaryServer", arg)
		}
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	etcd, err := embeddedetcd.Start(dataDir)
	if err != nil {
		listener.Close()
		return nil, err
	}
	// A registry of this server's own, with a copy of the libraries' feature gate, as
	// kube-apiserver's test server does: servers of one process must not share
	// --emulated-version and the registry's flags.
	registry := basecompatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate.DeepCopy()); err != nil {
		listener.Close()
		etcd.Close()
		return nil, err
	}
	options, err := apiserver.NewOptions(io.Discard, registry)
	if err != nil {
		listener.Close()
		etcd.Close()
		return nil, err
	}
	options.Recommended.SecureServing.Listener = listener
	port := listener.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithCancel(context.Background())
	cmd := apiserver.NewCommand(ctx, options)
	cmd.SilenceErrors = true
	cmd.SetArgs(append([]string{"--standalone", "--data-dir", dataDir, "--bind-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(port), "--etcd-servers", etcd.ClientURL}, extraArgs...))
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = cmd.Execute()
	}()

	s := &server{t: t, dataDir: dataDir, port: port, etcdURL: etcd.ClientURL}
	s.running = func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	s.shutdown = sync.OnceValue(func() error {
		cancel()
		var err error
		select {
		case <-done:
			if runErr != nil {
				err = fmt.Errorf("the apiserver on port %d: %w", port, runErr)
			}
		case <-time.After(2 * time.Minute):
			err = fmt.Errorf("the apiserver on port %d still runs 2 minutes after it was told to stop", port)
		}
		// Closed already by a server that served; not by one that failed before.
		listener.Close()
		etcd.Close()
		return err
	})
	if err := s.waitReady(done); err != nil {
		stopErr := s.shutdown()
		if errors.Is(err, errEnded) {
			return nil, fmt.Errorf("%w: %v", err, runErr)
		}
		return nil, errors.Join(err, stopErr)
	}
	s.panicsBefore = handledPanics.Load()
	return s, nil
}

// handledPanics counts the panics recovered in this process (utilruntime.HandleCrash runs
// PanicHandlers first: the apiserver's handler chain, its watch cache), where a test of
// the binary looked for "panic" in its log.
var handledPanics atomic.Int64

func init() {
	utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, func(context.Context, interface{}) { handledPanics.Add(1) })
}

// panics is how many panics this process recovered from since s was ready: s's unless
// another server of the process, idle between tests, had one.
func (s *server) panics() int64 { return handledPanics.Load() - s.panicsBefore }
