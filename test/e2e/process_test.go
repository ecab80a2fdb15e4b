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

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// startDetached starts a component like local-up.sh does (own session, log file under
// the stack's logs); local-down.sh stops it once its PID is in the component's PID file.
func startDetached(t *testing.T, args []string, logName string) *framework.Process {
	t.Helper()
	p, err := framework.StartDetached(filepath.Join(localDir, "logs", logName), args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func processArgs(pidFile string) ([]string, error) {
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(pid)), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), nil
}

func stopByPIDFile(t *testing.T, pidFile string) {
	t.Helper()
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, fmt.Sprintf("pid %d to exit", pid), func() bool { return !alive(pid) })
}

// alive is false for exited processes, including zombies nobody reaps: processes
// started by local-up.sh are reparented, and PID 1 in a container may not reap them.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func replaceFlag(args []string, name, value string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == name && i+1 < len(args):
			out = append(out, name, value)
			i++
		case strings.HasPrefix(args[i], name+"="):
			out = append(out, name+"="+value)
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// stopOperatorAPIServer stops our apiserver through its PID file and returns a function
// that starts it again with the same command line, as local-up.sh did, and returns when
// its /readyz answered 200. The restart also runs at cleanup if the test did not get to it.
func stopOperatorAPIServer(t *testing.T) (restart func() time.Time) {
	t.Helper()
	pidFile := filepath.Join(localDir, "pids", "nginx-operator-apiserver.pid")
	args, err := processArgs(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	stopByPIDFile(t, pidFile)
	var once sync.Once
	var ready time.Time
	restart = func() time.Time {
		once.Do(func() {
			proc := startDetached(t, args, "nginx-operator-apiserver.log")
			// local-down.sh stops the new process through the same PID file.
			if err := os.WriteFile(pidFile, []byte(strconv.Itoa(proc.PID())), 0o644); err != nil {
				t.Fatal(err)
			}
			client := adminHTTPClient(t)
			waitFor(t, 2*time.Minute, "our apiserver /readyz", func() bool {
				resp, err := client.Get(operatorURL("/readyz"))
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			})
			ready = time.Now()
		})
		return ready
	}
	t.Cleanup(func() { restart() })
	return restart
}

// apiServicesAvailable reports whether both of our APIServices are Available.
func apiServicesAvailable(t *testing.T) func() bool {
	return func() bool {
		out, _, _ := kubectl(t, "", "get", "apiservice", "v1alpha1.operator.example.com", "v1alpha2.operator.example.com",
			"-o", "jsonpath={.items[*].status.conditions[?(@.type=='Available')].status}")
		return out == "True True"
	}
}
