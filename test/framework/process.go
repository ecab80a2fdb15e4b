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

package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Process is one child process a test started, handled by its PID only: tests never
// look processes up by name, so a developer's own etcd or apiserver is never touched.
type Process struct {
	Name    string // the binary's base name, for messages
	LogPath string // its stdout and stderr
	cmd     *exec.Cmd
	exited  chan struct{}
	// ctx ends when the process does, with cause why (ErrExited and its exit status).
	ctx context.Context
}

// ErrExited is what a wait for a process returns when the process ended before the
// condition waited for held: no condition a process brings about holds after it is gone,
// so a wait stops at once rather than at its timeout.
var ErrExited = errors.New("exited")

// ErrPortTaken is wrapped by the error of a wait whose process ended because a port,
// picked free for it a moment before, was taken by another process before it could bind
// it (the suites run side by side): starting it again on another port is the cure.
var ErrPortTaken = errors.New("a port picked for it was taken before it could bind it")

// StartProcess starts argv with its output into logPath (created anew). It runs in its
// own process group, so a Ctrl-C on the test reaches the test first and its cleanups stop
// the process, and on Linux the kernel kills it when the test binary dies: a test killed
// by -timeout runs no cleanups and must leave nothing holding ports.
func StartProcess(logPath string, argv ...string) (*Process, error) {
	return start(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, dieWithTheTest(), nil, argv)
}

// StartProcessWithEnv is StartProcess with env (NAME=value) added to the test's
// environment, for a tool configured only through its environment (KUBECONFIG) in a test
// that runs in parallel, where t.Setenv is not allowed.
func StartProcessWithEnv(logPath string, env []string, argv ...string) (*Process, error) {
	return start(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, dieWithTheTest(), env, argv)
}

// StartDetached starts argv the way hack/local-up.sh starts a component: in a session of
// its own, outliving the test binary, its output appended to logPath. It is for processes
// that replace a component of a stack, which local-down.sh later stops through its PID file.
func StartDetached(logPath string, argv ...string) (*Process, error) {
	return start(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, &syscall.SysProcAttr{Setsid: true}, nil, argv)
}

func start(logPath string, flags int, attr *syscall.SysProcAttr, env, argv []string) (*Process, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command to start")
	}
	log, err := os.OpenFile(logPath, flags, 0o644)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	p := &Process{Name: filepath.Base(argv[0]), LogPath: logPath, cmd: exec.Command(argv[0], argv[1:]...), exited: make(chan struct{}), ctx: ctx}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.SysProcAttr = attr
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	if err := p.cmd.Start(); err != nil {
		log.Close()
		cancel(err)
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	// Reaping here keeps an exited child from lingering as a zombie that looks alive.
	go func() {
		status := p.cmd.Wait()
		log.Close()
		if status == nil {
			cancel(fmt.Errorf("%s (pid %d) %w with status 0", p.Name, p.PID(), ErrExited))
		} else {
			cancel(fmt.Errorf("%s (pid %d) %w: %w", p.Name, p.PID(), ErrExited, status))
		}
		close(p.exited)
	}()
	return p, nil
}

// PID is the process's ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the process is gone.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Context ends when the process exits; its cause (context.Cause) wraps ErrExited and the
// exit status. A wait given it (PollWhile) stops as soon as the process is gone.
func (p *Process) Context() context.Context { return p.ctx }

// WaitUntil polls done at once and then every interval until it holds (nil), timeout
// passes, or the process exits: then it returns at once, with an error that wraps ErrExited
// and the exit status, and also ErrPortTaken when the log says a port was in use.
func (p *Process) WaitUntil(timeout, interval time.Duration, done func() bool) error {
	err := PollWhile(p.ctx, timeout, interval, done)
	if errors.Is(err, ErrExited) && strings.Contains(p.Log(), "address already in use") {
		return fmt.Errorf("%w (%w)", err, ErrPortTaken)
	}
	return err
}

// RetryOnPortTaken calls start, which picks free ports and starts something on them, until
// it succeeds, fails for another reason than ErrPortTaken, or has failed attempts times;
// it returns start's last error. logf (t.Logf) tells of each retry.
func RetryOnPortTaken(attempts int, logf func(format string, args ...any), start func() error) error {
	for attempt := 1; ; attempt++ {
		err := start()
		if err == nil || !errors.Is(err, ErrPortTaken) || attempt >= attempts {
			return err
		}
		logf("attempt %d: %v; starting again on other ports", attempt, err)
	}
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL and returns once the process is gone.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && p.Running() {
		return fmt.Errorf("killing %s (pid %d): %w", p.Name, p.PID(), err)
	}
	<-p.exited
	return nil
}

// Stop sends sig and, if the process is still there after grace, SIGKILL (then killed
// is true); it returns once the process is gone. Stopping a nil or exited process does
// nothing, so Stop can be a cleanup registered before the start succeeded.
func (p *Process) Stop(sig os.Signal, grace time.Duration) (killed bool) {
	if p == nil || !p.Running() {
		return false
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
		return false
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return true
	}
}

// Log returns what the process has written so far.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.LogPath, err)
	}
	return string(b)
}
