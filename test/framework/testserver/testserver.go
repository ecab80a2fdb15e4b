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

// Package testserver is the one launcher of our apiserver for the suites that test it
// alone (test/integration, test/faults): in standalone mode on a data directory, either in
// the test process (where the race detector sees the product) or as a built binary (where
// the process is the subject: its command line, log, exit, a kill), with one API. Its wait
// for readiness ends as soon as the server ends, with why.
//
// It is a package of its own, not part of test/framework, so that the suites which never
// start the apiserver this way (e2e, deploy, bench) do not link the product's server.
package testserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	basecompatibility "k8s.io/component-base/compatibility"

	apiserver "github.com/example/nginx-operator/pkg/cmd/server"
	"github.com/example/nginx-operator/pkg/embeddedetcd"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

// BuildBinary returns our apiserver (./cmd/apiserver of the checkout, two levels above
// the suite's directory of test/, where go test runs it) built with
// framework.ProductBinary, as the Makefile builds bin/apiserver: once per make test for
// every suite that asks for the same ldflags (which may stamp a version), kept between runs.
func BuildBinary(ldflags ...string) (string, error) {
	return framework.ProductBinary(filepath.Join("..", ".."), filepath.Join("..", ".."), "./cmd/apiserver", ldflags...)
}

// Options say what to start.
type Options struct {
	// Binary is the apiserver binary to run (built once by the suite's TestMain with
	// BuildBinary, or a previous release's); empty runs the apiserver's command in this
	// process.
	Binary string
	// DataDir is the server's --data-dir: its PKI, the kubeconfig it writes and, without
	// --etcd-servers among Args, its embedded etcd. A server started again on the same
	// directory finds its data.
	DataDir string
	// Args are flags after the ones the launcher sets (--standalone, --data-dir,
	// --bind-address, --secure-port).
	Args []string
	// ConfigureClient, if set, adjusts the admin client configuration before Client is
	// made from it (the fault suite lifts client-go's rate limit).
	ConfigureClient func(*rest.Config)
	// PickPort picks a binary's port (default framework.MustFreePort); a test replaces it
	// to hand out a taken one. An in-process server gets a listener bound already.
	PickPort func(testing.TB) int
}

// ReadyTimeout bounds the wait for /readyz. It bounds what never happens; a server that
// ends while starting ends the wait at once.
const ReadyTimeout = 2 * time.Minute

// portAttempts is how often a binary starts again after another process took its port.
const portAttempts = 5

// Server is one apiserver started by Start or Launch.
type Server struct {
	DataDir string
	Port    int
	// Config and Client are the admin's, from the kubeconfig the server wrote.
	Config *rest.Config
	Client *clientset.Clientset
	// EtcdURL is the etcd the server stores in, where the test knows it: the one started
	// for an in-process server, or the one given with --etcd-servers. A binary's embedded
	// etcd is its own and not known here ("").
	EtcdURL string
	// LogFile is a binary's standard output and error, apiserver-<port>.log in DataDir;
	// "" for an in-process server.
	LogFile string

	options Options
	proc    *framework.Process // nil in-process
	// ended ends with the server, with why (framework.ErrExited).
	ended context.Context
	// shutdown stops the server and waits until it is gone; calling it again returns
	// what the first call did.
	shutdown func() error
}

// Start launches a server as o says and returns once it is ready; the test fails if it
// does not become ready, and t's cleanup stops it (and prints the end of a binary's log
// when the test failed).
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	s, err := Launch(t, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() { s.logTailOnFailure(t) })
	return s
}

// Launch is Start for a server that outlives t (a suite's shared server): it returns the
// error instead of failing t, and the caller stops the server. t only logs.
func Launch(t testing.TB, o Options) (*Server, error) {
	t.Helper()
	if o.DataDir == "" {
		return nil, errors.New("testserver: no DataDir")
	}
	started := time.Now()
	var s *Server
	var err error
	if o.Binary == "" {
		s, err = launchInProcess(o)
	} else {
		err = framework.RetryOnPortTaken(portAttempts, t.Logf, func() (err error) {
			s, err = launchBinary(t, o)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	if s.proc != nil {
		t.Logf("apiserver (pid %d) ready on port %d after %s", s.proc.PID(), s.Port, time.Since(started).Round(time.Millisecond))
	} else {
		t.Logf("apiserver ready on port %d after %s", s.Port, time.Since(started).Round(time.Millisecond))
	}
	return s, nil
}

// launchBinary starts the binary once on a port picked free and waits until it is ready;
// when it is not, the process is stopped and the error says why (framework.ErrPortTaken
// when another process had taken the port).
func launchBinary(t testing.TB, o Options) (*Server, error) {
	pick := o.PickPort
	if pick == nil {
		pick = framework.MustFreePort
	}
	s := &Server{DataDir: o.DataDir, Port: pick(t), EtcdURL: etcdServers(o.Args), options: o}
	s.LogFile = filepath.Join(o.DataDir, fmt.Sprintf("apiserver-%d.log", s.Port))
	argv := append([]string{o.Binary, "--standalone", "--data-dir", o.DataDir,
		"--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(s.Port)}, o.Args...)
	proc, err := framework.StartProcess(s.LogFile, argv...)
	if err != nil {
		return nil, err
	}
	s.proc, s.ended = proc, proc.Context()
	// Stopped by its PID, never by name.
	s.shutdown = sync.OnceValue(func() error { proc.Stop(os.Interrupt, 30*time.Second); return nil })
	if err := proc.WaitUntil(ReadyTimeout, 200*time.Millisecond, s.ready); err != nil {
		_ = s.shutdown()
		if errors.Is(err, framework.ErrPortTaken) {
			return nil, fmt.Errorf("port %d: %w", s.Port, err)
		}
		return nil, fmt.Errorf("the apiserver was not ready: %w; log:\n%s", err, proc.Log())
	}
	return s, nil
}

// launchInProcess runs the apiserver command in this process, as kube's integration tests
// run kube-apiserver and sample-apiserver: the listener is bound before the server starts
// (no free-port race) and handed to it, the command parses --standalone, --data-dir, the
// port, the etcd and o.Args with its own flags, then completes, validates and runs the
// options as the binary does.
//
// Without --etcd-servers the etcd is started here, in the data directory as the binary's
// embedded one (so data outlives a restart on the same directory), so that tests can read
// it (EtcdURL).
func launchInProcess(o Options) (*Server, error) {
	for _, arg := range o.Args {
		// The libraries read their feature gates from one process-wide gate: on a server
		// in this process the flag would only half apply, or reach every server.
		if strings.HasPrefix(arg, "--feature-gates") {
			return nil, fmt.Errorf("%s acts on the whole process: test it with the binary", arg)
		}
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	args := append([]string{"--standalone", "--data-dir", o.DataDir, "--bind-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(listener.Addr().(*net.TCPAddr).Port)}, o.Args...)
	closeEtcd := func() {}
	etcdURL := etcdServers(o.Args)
	if etcdURL == "" {
		etcd, err := embeddedetcd.Start(o.DataDir)
		if err != nil {
			listener.Close()
			return nil, err
		}
		closeEtcd, etcdURL = etcd.Close, etcd.ClientURL
		args = append(args, "--etcd-servers", etcdURL)
	}
	// A registry of this server's own, with a copy of the libraries' feature gate, as
	// kube-apiserver's test server does: servers of one process must not share
	// --emulated-version and the registry's flags.
	registry := basecompatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate.DeepCopy()); err != nil {
		listener.Close()
		closeEtcd()
		return nil, err
	}
	options, err := apiserver.NewOptions(io.Discard, registry)
	if err != nil {
		listener.Close()
		closeEtcd()
		return nil, err
	}
	options.Recommended.SecureServing.Listener = listener
	s := &Server{DataDir: o.DataDir, Port: listener.Addr().(*net.TCPAddr).Port, EtcdURL: etcdURL, options: o}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := apiserver.NewCommand(ctx, options)
	cmd.SilenceErrors = true
	cmd.SetArgs(args)
	ended, end := context.WithCancelCause(context.Background())
	s.ended = ended
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = cmd.Execute()
		end(fmt.Errorf("the apiserver command on port %d %w: %v", s.Port, framework.ErrExited, runErr))
	}()
	s.shutdown = sync.OnceValue(func() error {
		cancel()
		var err error
		select {
		case <-done:
			if runErr != nil {
				err = fmt.Errorf("the apiserver on port %d: %w", s.Port, runErr)
			}
		case <-time.After(2 * time.Minute):
			err = fmt.Errorf("the apiserver on port %d still runs 2 minutes after it was told to stop", s.Port)
		}
		// Closed already by a server that served; not by one that failed before.
		listener.Close()
		closeEtcd()
		return err
	})
	if err := framework.PollWhile(ended, ReadyTimeout, 200*time.Millisecond, s.ready); err != nil {
		stopErr := s.shutdown()
		if errors.Is(err, framework.ErrExited) {
			return nil, err
		}
		return nil, errors.Join(fmt.Errorf("the apiserver was not ready: %w", err), stopErr)
	}
	return s, nil
}

// etcdServers is the value of --etcd-servers among args, or "".
func etcdServers(args []string) string {
	for i, arg := range args {
		if v, ok := strings.CutPrefix(arg, "--etcd-servers="); ok {
			return v
		}
		if arg == "--etcd-servers" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// ready reports whether the server answers /readyz with ok through the kubeconfig it
// writes.
func (s *Server) ready() bool {
	if err := s.loadClients(); err != nil {
		return false
	}
	body, err := s.Client.RESTClient().Get().AbsPath("/readyz").DoRaw(s.ended)
	return err == nil && string(body) == "ok"
}

// loadClients reads the kubeconfig the server writes, once it names this server's port:
// one left by an earlier server on the same data directory points elsewhere.
func (s *Server) loadClients() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.DataDir, "kubeconfig"))
	if err != nil {
		return err
	}
	if want := s.URL(""); cfg.Host != want {
		return fmt.Errorf("kubeconfig points at %s, not yet at %s", cfg.Host, want)
	}
	cfg.Timeout = 30 * time.Second
	if s.options.ConfigureClient != nil {
		s.options.ConfigureClient(cfg)
	}
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	s.Config, s.Client = cfg, client
	return nil
}

// URL is https://127.0.0.1:<port> followed by path.
func (s *Server) URL(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", s.Port, path)
}

// Running reports whether the server has not ended.
func (s *Server) Running() bool { return s.ended.Err() == nil }

// Stop stops the server gracefully and waits until it is gone: a binary by its PID
// (SIGINT, SIGKILL after 30 s), an in-process one by ending its command's context. Calling
// it again returns what the first call did; an in-process server that would not stop, or
// whose command failed, is an error.
func (s *Server) Stop() error { return s.shutdown() }

// PID is a binary's process ID.
func (s *Server) PID() int {
	if s.proc == nil {
		panic("testserver: an in-process server has no PID of its own")
	}
	return s.proc.PID()
}

// Kill sends SIGKILL to a binary, by its PID, and returns once it is gone.
func (s *Server) Kill() error {
	if s.proc == nil {
		return errors.New("testserver: an in-process server cannot be killed")
	}
	return s.proc.Kill()
}

// Log is what a binary has written so far.
func (s *Server) Log() string {
	if s.proc == nil {
		return ""
	}
	return s.proc.Log()
}

// logTailOnFailure prints the end of a binary's log when the test failed: the data
// directory, and the log with it, is usually removed afterwards.
func (s *Server) logTailOnFailure(t testing.TB) {
	if !t.Failed() || s.proc == nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(s.Log()), "\n")
	t.Logf("end of %s:\n%s", s.LogFile, strings.Join(lines[max(0, len(lines)-40):], "\n"))
}
