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
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// controllerProcess is bin/controller started by the convergence scenario, with its
// metrics, probes and pprof on free loopback ports.
type controllerProcess struct {
	proc       *framework.Process
	MetricsURL string
	PprofURL   string
	LogFile    string
}

// startController starts bin/controller against the stack in localDir, the way
// local-up.sh does but without leader election: it is the only replica, and a Lease
// renewal every two seconds would be writes that belong to no NginxOperator.
// It returns once /readyz answers (the informer caches have synced).
func startController(ctx context.Context, repoRoot, localDir string) (*controllerProcess, error) {
	var lastErr error
	// A port found free can be taken before the controller binds it: retry then.
	for attempt := 0; attempt < 3; attempt++ {
		p, err := tryStartController(ctx, repoRoot, localDir)
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func tryStartController(ctx context.Context, repoRoot, localDir string) (*controllerProcess, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	metrics, probe, pprof := ports[0], ports[1], ports[2]
	logFile := filepath.Join(localDir, "logs", "bench-controller.log")
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return nil, err
	}
	proc, err := framework.StartProcess(logFile, filepath.Join(repoRoot, "bin", "controller"),
		"--kubeconfig", filepath.Join(localDir, "nginx-operator-controller.kubeconfig"),
		"--leader-elect=false",
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics),
		// Plain HTTP on loopback: with authentication every scrape would add a TokenReview
		// and a SubjectAccessReview to the kube-apiserver traffic the benchmark measures.
		"--metrics-secure=false",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probe),
		fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", pprof))
	if err != nil {
		return nil, fmt.Errorf("%w (make build first)", err)
	}
	p := &controllerProcess{proc: proc, LogFile: logFile,
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics),
		PprofURL:   fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", pprof)}

	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", probe)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-proc.Exited():
			return nil, fmt.Errorf("the controller exited while starting; see %s", logFile)
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("the controller was not ready after 2 minutes; see %s", logFile)
		}
	}
}

// Stop ends the process it started, by PID: TERM, then KILL after 15 seconds.
func (p *controllerProcess) Stop() { p.proc.Stop(syscall.SIGTERM, 15*time.Second) }

// RSS is the controller's resident memory now and at its peak (VmRSS and VmHWM of
// /proc/<pid>/status).
func (p *controllerProcess) RSS() (now, peak float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.proc.PID()))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		field, value, ok := strings.Cut(line, ":")
		if !ok || (field != "VmRSS" && field != "VmHWM") {
			continue
		}
		var kib float64
		if _, err := fmt.Sscanf(strings.TrimSpace(value), "%f kB", &kib); err != nil {
			return 0, 0, fmt.Errorf("reading %s of the controller: %w", field, err)
		}
		if field == "VmRSS" {
			now = kib * 1024
		} else {
			peak = kib * 1024
		}
	}
	if now == 0 || peak == 0 {
		return 0, 0, errors.New("no VmRSS and VmHWM in the controller's /proc status")
	}
	return now, peak, nil
}

// Scrape reads the controller's metrics.
func (p *controllerProcess) Scrape(ctx context.Context) (metricSnapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.MetricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping the controller: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping the controller: %s", resp.Status)
	}
	return parseMetrics(resp.Body)
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Join(errors.New("finding a free port"), err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
