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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStaysHealthyPastNodeMonitorGrace watches an NginxOperator, its pods and the fake
// nodes for twice kube-controller-manager's node-monitor grace period. Nodes that stop
// renewing their Lease are marked unreachable after one grace period, and their pods
// not ready: a check right after start-up cannot see that.
func TestStaysHealthyPastNodeMonitorGrace(t *testing.T) {
	t.Parallel()
	grace := nodeMonitorGracePeriod(t)
	const name = "long-lived"
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", name, "--ignore-not-found", "--wait=false") })
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: "+name+", namespace: default}\nspec: {replicas: 2}\n", "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "120s", "ngx/"+name)

	// The nodes are older than the NginxOperator: two grace periods from here cover both.
	hold := 2*grace + 15*time.Second
	start := time.Now()
	checks := 0
	for time.Since(start) < hold {
		checks++
		if problem := unhealthy(t, name); problem != "" {
			t.Fatalf("after %s (node-monitor grace period %s): %s", time.Since(start).Round(time.Second), grace, problem)
		}
		time.Sleep(5 * time.Second)
	}
	if problem := unhealthy(t, name); problem != "" {
		t.Fatalf("at the end: %s", problem)
	}
	t.Logf("healthy through %d checks over %s (node-monitor grace period %s)", checks+1, time.Since(start).Round(time.Second), grace)

	// Each fake node holds a Lease that is being renewed.
	for _, node := range strings.Fields(get(t, "get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")) {
		renewed := get(t, "get", "lease", "-n", "kube-node-lease", node, "-o", "jsonpath={.spec.renewTime}")
		at, err := time.Parse(time.RFC3339Nano, renewed)
		if err != nil {
			t.Errorf("node %s: no renewed Lease (renewTime %q)", node, renewed)
			continue
		}
		if age := time.Since(at); age > grace {
			t.Errorf("node %s: Lease last renewed %s ago, more than the grace period %s", node, age.Round(time.Second), grace)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(localDir, "logs", "kube-controller-manager.log")); strings.Contains(string(log), "Entering master disruption mode") {
		t.Error("kube-controller-manager entered master disruption mode: it lost every node at some point")
	}
}

// unhealthy describes the first thing that is not as it should be, or returns "".
// Reads that fail (a component restarting in another test) are not judged.
func unhealthy(t *testing.T, name string) string {
	t.Helper()
	if ready := get(t, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`); ready != "" {
		for _, node := range strings.Fields(ready) {
			if !strings.HasSuffix(node, "=True") {
				return "node not Ready: " + node
			}
		}
	}
	if got := get(t, "get", "ngx", name, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.readyReplicas}/{.spec.replicas}`); got != "" && got != "True 2/2" {
		return "NginxOperator Available readyReplicas/replicas = " + got + "; conditions: " +
			get(t, "get", "ngx", name, "-o", "jsonpath={.status.conditions}")
	}
	if pods := get(t, "get", "pods", "-l", "app.kubernetes.io/instance="+name, "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`); pods != "" {
		for _, pod := range strings.Fields(pods) {
			if !strings.HasSuffix(pod, "=True") {
				return "pod not Ready: " + pod
			}
		}
	}
	return ""
}

// nodeMonitorGracePeriod reads the flag from the running kube-controller-manager.
func nodeMonitorGracePeriod(t *testing.T) time.Duration {
	t.Helper()
	args, err := processArgs(filepath.Join(localDir, "pids", "kube-controller-manager.pid"))
	if err != nil {
		t.Fatal(err)
	}
	for i, arg := range args {
		value, found := strings.CutPrefix(arg, "--node-monitor-grace-period=")
		if !found && arg == "--node-monitor-grace-period" && i+1 < len(args) {
			value, found = args[i+1], true
		}
		if found {
			d, err := time.ParseDuration(value)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatal("kube-controller-manager runs without --node-monitor-grace-period; local-up.sh sets it so tests know how long to look")
	return 0
}
