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

package nginxreload

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// fakeProc writes a /proc tree: pid -> command line (NUL-separated) and parent.
func fakeProc(t *testing.T, procs map[int]proc) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// comm may hold spaces and parentheses; the kernel cuts it at 15 bytes.
		stat := strconv.Itoa(pid) + " (nginx) (x) S " + strconv.Itoa(p.ppid) + " 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(p.cmdline), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []string{"self", "sys", "net"} {
		if err := os.Mkdir(filepath.Join(root, other), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type proc struct {
	cmdline string
	ppid    int
}

// TestFindMasterAndWorkers: the master is found by its title (argv NUL-separated, or
// padded as nginx's setproctitle leaves it); its workers are its children titled worker,
// shutting-down ones included, and neither the cache manager nor another master's worker.
func TestFindMasterAndWorkers(t *testing.T) {
	root := fakeProc(t, map[int]proc{
		1:  {"/pause\x00", 0},
		7:  {"nginx: master process nginx -g daemon off;\x00\x00\x00", 0},
		30: {"nginx: worker process\x00\x00", 7},
		31: {"nginx: worker process is shutting down\x00", 7},
		32: {"nginx: cache manager process\x00", 7},
		40: {"/nginx-exporter\x00--reload-content-dir\x00/var/run/nginx-operator/content\x00", 0},
		41: {"nginx: worker process\x00", 99},
		50: {"sh\x00-c\x00echo nginx: master process\x00", 40},
	})
	master, err := findMaster(root, nil)
	if err != nil || master != 7 {
		t.Fatalf("findMaster: %d, %v; want 7", master, err)
	}
	got, err := workers(root, master)
	if err != nil || !slices.Equal(got, []int{30, 31}) {
		t.Errorf("workers: %v, %v; want [30 31]", got, err)
	}
}

// TestFindMasterNoneOrTwo: no master is errNoMaster; two are an error, unless accept
// picks one.
func TestFindMasterNoneOrTwo(t *testing.T) {
	none := fakeProc(t, map[int]proc{1: {"/pause\x00", 0}, 9: {"nginx\x00-g\x00daemon off;\x00", 1}})
	if _, err := findMaster(none, nil); !errors.Is(err, errNoMaster) || err.Error() != "nginx's master process not found" {
		t.Errorf("no master: %v", err)
	}
	two := fakeProc(t, map[int]proc{7: {"nginx: master process nginx\x00", 0}, 8: {"nginx: master process nginx\x00", 0}})
	if _, err := findMaster(two, nil); err == nil {
		t.Error("two masters: no error")
	}
	if pid, err := findMaster(two, func(pid int) bool { return pid == 8 }); err != nil || pid != 8 {
		t.Errorf("two masters, accept 8: %d, %v", pid, err)
	}
}

func TestParentPID(t *testing.T) {
	for stat, want := range map[string]int{
		"7 (nginx) S 1 7 7 0 -1":          1,
		"12 (a) b) (c) R 7 12 1 0 -1":     7,
		"30 (nginx: worker) S 7 7 7 0 -1": 7,
	} {
		if got, err := parentPID([]byte(stat)); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", stat, got, err, want)
		}
	}
	for _, bad := range []string{"", "7 nginx S 1", "7 (nginx) S"} {
		if _, err := parentPID([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
