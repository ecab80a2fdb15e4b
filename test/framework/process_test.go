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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// statField returns field n (1-based, as in proc(5)) of /proc/pid/stat.
func statField(t *testing.T, pid, n int) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces; the fields after it do not.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	v, err := strconv.Atoi(fields[n-3])
	if err != nil {
		t.Fatalf("field %d of /proc/%d/stat: %v", n, pid, err)
	}
	return v
}

func TestStartProcessRunsInItsOwnGroupAndStopsOnTheSignal(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	p, err := StartProcess(filepath.Join(t.TempDir(), "sleep.log"), "sleep", "600")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	if !p.Running() {
		t.Fatal("sleep exited at once")
	}
	if pgid := statField(t, p.PID(), 5); pgid != p.PID() {
		t.Errorf("process group %d, want its own (%d): a Ctrl-C on the test would reach it first", pgid, p.PID())
	}
	if killed := p.Stop(syscall.SIGTERM, 30*time.Second); killed {
		t.Error("sleep needed SIGKILL; SIGTERM ends it")
	}
	if p.Running() {
		t.Error("still running after Stop returned")
	}
	// Stopping again, or stopping nothing, is what cleanups do.
	if p.Stop(syscall.SIGTERM, time.Second) {
		t.Error("stopping an exited process killed something")
	}
	var none *Process
	none.Stop(syscall.SIGTERM, time.Second)
}

func TestStopKillsAProcessThatIgnoresTheSignal(t *testing.T) {
	if _, err := os.Stat("/proc/self/comm"); err != nil {
		t.Skip("needs /proc")
	}
	// An ignored signal stays ignored across exec, so sleep itself ignores SIGTERM.
	p, err := StartProcess(filepath.Join(t.TempDir(), "stubborn.log"), "sh", "-c", `trap "" TERM; exec sleep 600`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	// sh runs sleep only after installing the trap.
	WaitFor(t, 30*time.Second, "sh to exec sleep", func() bool {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/comm")
		return string(comm) == "sleep\n"
	})
	if killed := p.Stop(syscall.SIGTERM, time.Second); !killed {
		t.Error("Stop reported a graceful exit for a process that ignores SIGTERM")
	}
	if p.Running() {
		t.Error("still running after Stop returned")
	}
}

func TestLogHoldsTheOutputAndStartDetachedAppends(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "component.log")
	if err := os.WriteFile(logPath, []byte("from the first run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := StartDetached(logPath, "sh", "-c", `echo to stdout; echo to stderr >&2; exec sleep 600`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	WaitFor(t, 30*time.Second, "both lines in the log", func() bool {
		return strings.Contains(p.Log(), "to stdout") && strings.Contains(p.Log(), "to stderr")
	})
	if !strings.HasPrefix(p.Log(), "from the first run\n") {
		t.Errorf("the earlier log was not kept:\n%s", p.Log())
	}
	if sid := statField(t, p.PID(), 6); sid != p.PID() {
		t.Errorf("session %d, want its own (%d), as local-up.sh starts components", sid, p.PID())
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("killing an exited process: %v", err)
	}
}

func TestStartProcessReportsAMissingBinary(t *testing.T) {
	if _, err := StartProcess(filepath.Join(t.TempDir(), "x.log"), filepath.Join(t.TempDir(), "no-such-binary")); err == nil {
		t.Fatal("no error starting a binary that does not exist")
	}
	if _, err := StartProcess(filepath.Join(t.TempDir(), "x.log")); err == nil {
		t.Fatal("no error starting an empty command line")
	}
}

// A wait for a condition only a running process can bring about ends when the process
// does, with its exit status, not at the timeout.
func TestWaitUntilEndsWhenTheProcessExits(t *testing.T) {
	p, err := StartProcess(filepath.Join(t.TempDir(), "short.log"), "sh", "-c", "exit 3")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = p.WaitUntil(time.Minute, 10*time.Millisecond, func() bool { return false })
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the wait took %s after the process exited at once", took)
	}
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error %v, want ErrExited with the exit status 3", err)
	}
	if errors.Is(err, ErrPortTaken) {
		t.Errorf("error %v claims a port was taken; the log says nothing of it", err)
	}
	if cause := context.Cause(p.Context()); !errors.Is(cause, ErrExited) {
		t.Errorf("the process's context ended with %v, want ErrExited", cause)
	}
}

func TestWaitUntilTellsALostPortAndRetryOnPortTakenStartsAgain(t *testing.T) {
	dir := t.TempDir()
	starts := 0
	err := RetryOnPortTaken(3, t.Logf, func() error {
		starts++
		script := "true" // then runs: the second start succeeds and keeps running
		if starts == 1 {
			script = "echo 'listen tcp 127.0.0.1:1234: bind: address already in use' >&2; exit 1"
		}
		p, err := StartProcess(filepath.Join(dir, fmt.Sprintf("try-%d.log", starts)), "sh", "-c", script+"; sleep 600")
		if err != nil {
			return err
		}
		defer func() { _ = p.Kill() }() // the first start has exited already
		if starts == 1 {
			err := p.WaitUntil(time.Minute, 10*time.Millisecond, func() bool { return false })
			if !errors.Is(err, ErrPortTaken) || !errors.Is(err, ErrExited) {
				t.Errorf("error %v, want ErrPortTaken and ErrExited", err)
			}
			return err
		}
		return p.WaitUntil(time.Minute, 10*time.Millisecond, p.Running)
	})
	if err != nil || starts != 2 {
		t.Errorf("RetryOnPortTaken: %v after %d starts, want success at the second", err, starts)
	}
	// Another error is not retried, and the last one is returned.
	starts = 0
	failed := errors.New("failed")
	if err := RetryOnPortTaken(3, t.Logf, func() error { starts++; return failed }); err != failed || starts != 1 {
		t.Errorf("RetryOnPortTaken: %v after %d starts, want the error of the only start", err, starts)
	}
	starts = 0
	if err := RetryOnPortTaken(3, t.Logf, func() error { starts++; return ErrPortTaken }); !errors.Is(err, ErrPortTaken) || starts != 3 {
		t.Errorf("RetryOnPortTaken: %v after %d starts, want ErrPortTaken after 3", err, starts)
	}
}
