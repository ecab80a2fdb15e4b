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

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the pause binary when this variable is set.
const runPauseEnv = "PAUSE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runPauseEnv) == "1" {
		main()
		os.Exit(3) // main only returns for --version
	}
	os.Exit(m.Run())
}

func TestExitsZeroOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), runPauseEnv+"=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			lines := bufio.NewScanner(stderr)
			// Not PID 1 here, so it warns — after it has subscribed to signals.
			if !lines.Scan() || !strings.Contains(lines.Text(), "should be PID 1") {
				t.Fatalf("pause did not start as expected: %q %v", lines.Text(), lines.Err())
			}
			// A SIGCHLD without children must not stop it.
			if err := cmd.Process.Signal(syscall.SIGCHLD); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if !lines.Scan() || !strings.Contains(lines.Text(), "shutting down") {
				t.Fatalf("pause did not report the shutdown: %q %v", lines.Text(), lines.Err())
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("pause exited with %v after %v, want exit status 0", err, sig)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("pause still runs 30s after %v", sig)
			}
		})
	}
}

func TestReapChildrenCollectsExitedChildren(t *testing.T) {
	// Reap on SIGCHLD, as main does; subscribed before any child can exit.
	sigchld := make(chan os.Signal, 8)
	signal.Notify(sigchld, syscall.SIGCHLD)
	defer signal.Stop(sigchld)
	var pids []int
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, cmd.Process.Pid)
	}
	want := map[int]bool{}
	for _, pid := range pids {
		want[pid] = true
	}
	timeout := time.After(60 * time.Second)
	for len(want) > 0 {
		select {
		case <-sigchld:
		case <-timeout:
			t.Fatalf("children %v were never reaped", want)
		}
		for _, pid := range reapChildren() {
			if !want[pid] {
				t.Errorf("reaped pid %d, which this test did not start", pid)
			}
			delete(want, pid)
		}
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("child %d is still in /proc after being reaped (stat error %v)", pid, err)
		}
	}
}
