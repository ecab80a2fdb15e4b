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

package faults

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memorySampler reads a process's resident set size from /proc/PID/status until it is
// stopped, and keeps the peak.
type memorySampler struct {
	pid      int
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	mu      sync.Mutex
	peakKiB int64
	err     error
}

func sampleMemory(pid int, every time.Duration) *memorySampler {
	m := &memorySampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			rss, err := procStatusKiB(pid, "VmRSS")
			m.mu.Lock()
			if err != nil && m.err == nil {
				m.err = err
			}
			m.peakKiB = max(m.peakKiB, rss)
			m.mu.Unlock()
			select {
			case <-m.stop:
				return
			case <-time.After(every):
			}
		}
	}()
	return m
}

// finish stops sampling and returns the peak RSS seen, or the process's own high-water
// mark (VmHWM) when that is higher: samples can miss a short peak.
func (m *memorySampler) finish() (peakKiB int64, err error) {
	m.stopOnce.Do(func() { close(m.stop) })
	<-m.done
	hwm, hwmErr := procStatusKiB(m.pid, "VmHWM")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return 0, m.err
	}
	if hwmErr != nil {
		return 0, hwmErr
	}
	return max(m.peakKiB, hwm), nil
}

// procStatusKiB reads one "Field:   1234 kB" line of /proc/PID/status.
func procStatusKiB(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		value, found := strings.CutPrefix(sc.Text(), field+":")
		if !found {
			continue
		}
		kib, found := strings.CutSuffix(strings.TrimSpace(value), " kB")
		if !found {
			return 0, fmt.Errorf("/proc/%d/status: %s not in kB: %q", pid, field, value)
		}
		return strconv.ParseInt(kib, 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
