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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// longLived is the NginxOperator the longevity watch follows.
const longLived = "long-lived"

// longevityWatch follows an NginxOperator, its pods and the fake nodes for twice
// kube-controller-manager's node-monitor grace period, from before the first test: nodes
// that stop renewing their Lease are marked unreachable after one grace period, and their
// pods not ready, which a check right after start-up cannot see. It runs beside the other
// tests rather than after them (as a parallel test would), since its checks skip reads that
// fail while a test restarts our apiserver or controller; none stops kwok,
// kube-controller-manager or kube-apiserver.
type longevityWatch struct {
	grace, held time.Duration
	checks      int
	problem     string
	done        chan struct{}
}

var longevity *longevityWatch

// startLongevityWatch creates the NginxOperator, waits for it to be Available and starts
// the watch; TestStaysHealthyPastNodeMonitorGrace reports what it saw.
func startLongevityWatch() error {
	grace, err := nodeMonitorGracePeriod()
	if err != nil {
		return err
	}
	manifest := "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: " + longLived + ", namespace: default}\nspec: {replicas: 2}\n"
	if _, err := kubectlOutput(manifest, "apply", "-f", "-"); err != nil {
		return err
	}
	if _, err := kubectlOutput("", "wait", "--for", "condition=Available", "--timeout", "120s", "ngx/"+longLived); err != nil {
		return err
	}
	w := &longevityWatch{grace: grace, done: make(chan struct{})}
	go w.run()
	longevity = w
	return nil
}

func (w *longevityWatch) run() {
	defer close(w.done)
	// The nodes are older than the NginxOperator: two grace periods from here cover both.
	hold := 2*w.grace + 15*time.Second
	start := time.Now()
	// A check every 5 s until the hold is over or one finds a problem.
	framework.Poll(hold, 5*time.Second, func() bool {
		w.checks++
		if w.problem = unhealthy(); w.problem != "" {
			w.problem = fmt.Sprintf("after %s (node-monitor grace period %s): %s", time.Since(start).Round(time.Second), w.grace, w.problem)
		}
		return w.problem != ""
	})
	if w.problem != "" {
		return
	}
	w.checks++
	if problem := unhealthy(); problem != "" {
		w.problem = "at the end: " + problem
	}
	w.held = time.Since(start)
}

// TestStaysHealthyPastNodeMonitorGrace reports the longevity watch, waiting for it if it
// is still running, and checks that every fake node's Lease is being renewed.
func TestStaysHealthyPastNodeMonitorGrace(t *testing.T) {
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", longLived, "--ignore-not-found", "--wait=false") })
	if longevity == nil {
		t.Fatal("TestMain started no longevity watch")
	}
	select {
	case <-longevity.done:
	case <-time.After(10 * time.Minute):
		t.Fatal("the longevity watch did not finish")
	}
	if longevity.problem != "" {
		t.Fatal(longevity.problem)
	}
	t.Logf("healthy through %d checks over %s (node-monitor grace period %s), beside the other tests", longevity.checks, longevity.held.Round(time.Second), longevity.grace)

	// Each fake node holds a Lease that is being renewed.
	for _, node := range strings.Fields(get(t, "get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")) {
		renewed := get(t, "get", "lease", "-n", "kube-node-lease", node, "-o", "jsonpath={.spec.renewTime}")
		at, err := time.Parse(time.RFC3339Nano, renewed)
		if err != nil {
			t.Errorf("node %s: no renewed Lease (renewTime %q)", node, renewed)
			continue
		}
		if age := time.Since(at); age > longevity.grace {
			t.Errorf("node %s: Lease last renewed %s ago, more than the grace period %s", node, age.Round(time.Second), longevity.grace)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(localDir, "logs", "kube-controller-manager.log")); strings.Contains(string(log), "Entering master disruption mode") {
		t.Error("kube-controller-manager entered master disruption mode: it lost every node at some point")
	}
}

// unhealthy describes the first thing that is not as it should be, or returns "".
// Reads that fail (a component restarting in another test) are not judged.
func unhealthy() string {
	read := func(args ...string) string {
		out, _ := kubectlOutput("", args...)
		return out
	}
	if ready := read("get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`); ready != "" {
		for _, node := range strings.Fields(ready) {
			if !strings.HasSuffix(node, "=True") {
				return "node not Ready: " + node
			}
		}
	}
	if got := read("get", "ngx", longLived, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.readyReplicas}/{.spec.replicas}`); got != "" && got != "True 2/2" {
		return "NginxOperator Available readyReplicas/replicas = " + got + "; conditions: " +
			read("get", "ngx", longLived, "-o", "jsonpath={.status.conditions}")
	}
	if pods := read("get", "pods", "-l", "app.kubernetes.io/instance="+longLived, "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`); pods != "" {
		for _, pod := range strings.Fields(pods) {
			if !strings.HasSuffix(pod, "=True") {
				return "pod not Ready: " + pod
			}
		}
	}
	return ""
}

// kubectlOutput runs kubectl against the stack outside any test (the watch outlives the
// test that would own it) and returns its standard output.
func kubectlOutput(stdin string, args ...string) (string, error) {
	out, errOut, err := kc.Exec(stdin, args...)
	if err != nil {
		err = fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, errOut)
	}
	return out, err
}

// nodeMonitorGracePeriod reads the flag from the running kube-controller-manager.
func nodeMonitorGracePeriod() (time.Duration, error) {
	args, err := processArgs(filepath.Join(localDir, "pids", "kube-controller-manager.pid"))
	if err != nil {
		return 0, err
	}
	for i, arg := range args {
		value, found := strings.CutPrefix(arg, "--node-monitor-grace-period=")
		if !found && arg == "--node-monitor-grace-period" && i+1 < len(args) {
			value, found = args[i+1], true
		}
		if found {
			return time.ParseDuration(value)
		}
	}
	return 0, errors.New("kube-controller-manager runs without --node-monitor-grace-period; local-up.sh sets it so tests know how long to look")
}
