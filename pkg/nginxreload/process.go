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
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// nginx renames its processes (setproctitle): the master's command line starts with
// masterTitle, a worker's with workerTitle ("nginx: worker process is shutting down" for
// one that finishes its requests after a reload).
const (
	masterTitle = "nginx: master process"
	workerTitle = "nginx: worker process"
)

// errNoMaster is the result of a search that found no nginx master process.
var errNoMaster = errors.New("nginx's master process not found")

// process is what /proc tells of one process.
type process struct {
	pid, ppid int
	cmdline   string
}

// processes lists every process under procRoot ("/proc", or a fake tree in tests). A
// process that exits while it is read is skipped.
func processes(procRoot string) ([]process, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var ps []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		p, err := readProcess(filepath.Join(procRoot, e.Name()), pid)
		if err != nil {
			continue
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func readProcess(dir string, pid int) (process, error) {
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return process{}, err
	}
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return process{}, err
	}
	ppid, err := parentPID(stat)
	if err != nil {
		return process{}, fmt.Errorf("%s/stat: %w", dir, err)
	}
	// Arguments are NUL-separated; nginx's title may be followed by NULs or spaces.
	title := strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	return process{pid: pid, ppid: ppid, cmdline: title}, nil
}

// parentPID reads the fourth field of /proc/<pid>/stat, "pid (comm) state ppid ...".
// comm may hold spaces and parentheses: the fields start after its last ')'.
func parentPID(stat []byte) (int, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no (comm) in %q", stat)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0, fmt.Errorf("no parent in %q", stat)
	}
	return strconv.Atoi(fields[1])
}

// findMaster returns the one nginx master process under procRoot that accept takes
// (nil takes any). Two masters (nginx's binary upgrade, or a host that sees several
// pods) are an error rather than a guess: a SIGHUP to the wrong one reloads nothing.
func findMaster(procRoot string, accept func(pid int) bool) (int, error) {
	ps, err := processes(procRoot)
	if err != nil {
		return 0, err
	}
	var masters []int
	for _, p := range ps {
		if strings.HasPrefix(p.cmdline, masterTitle) && (accept == nil || accept(p.pid)) {
			masters = append(masters, p.pid)
		}
	}
	switch len(masters) {
	case 0:
		return 0, errNoMaster
	case 1:
		return masters[0], nil
	default:
		slices.Sort(masters)
		return 0, fmt.Errorf("%d nginx master processes (%v), expected one", len(masters), masters)
	}
}

// workers returns the PIDs of master's worker processes, the ones finishing their
// requests after a reload included.
func workers(procRoot string, master int) ([]int, error) {
	ps, err := processes(procRoot)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, p := range ps {
		if p.ppid == master && strings.HasPrefix(p.cmdline, workerTitle) {
			pids = append(pids, p.pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// signalReload asks nginx's master to re-read its configuration. The sidecar shares the
// pod's process namespace and runs as nginx's user, which is what lets it signal.
func signalReload(pid int) error {
	return syscall.Kill(pid, syscall.SIGHUP)
}
