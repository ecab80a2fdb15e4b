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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcessDiesWithTheTestBinary runs this test binary as a stand-in for a test that
// starts a process and is then killed by -timeout (no cleanups run): the process must
// not outlive it.
func TestProcessDiesWithTheTestBinary(t *testing.T) {
	if os.Getenv("FRAMEWORK_PROCESS_PARENT") != "" {
		p, err := StartProcess(os.Getenv("FRAMEWORK_PROCESS_PARENT"), "sleep", "600")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println(p.PID())
		os.Exit(0) // as a killed test binary: no cleanup stops the child
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestProcessDiesWithTheTestBinary$")
	parent.Env = append(os.Environ(), "FRAMEWORK_PROCESS_PARENT="+filepath.Join(t.TempDir(), "sleep.log"))
	out, err := parent.Output()
	if err != nil {
		t.Fatalf("the stand-in test binary: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the stand-in printed %q, not a PID", out)
	}
	// Reap-or-gone: the orphan is reparented, so a zombie may linger until its new parent
	// reaps it; a zombie counts as gone.
	gone := func() bool {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))[0] == "Z"
	}
	t.Cleanup(func() {
		if !gone() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	WaitFor(t, 30*time.Second, fmt.Sprintf("sleep (pid %d) to die with its parent", pid), gone)
}
