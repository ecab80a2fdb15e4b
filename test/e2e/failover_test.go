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
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestControllerLeaderFailover runs a second controller beside the one local-up.sh
// started: only the leader reconciles, and killing it hands over within the lease.
func TestControllerLeaderFailover(t *testing.T) {
	pidFile := filepath.Join(localDir, "pids", "nginx-operator-controller.pid")
	args, err := processArgs(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	leaseHolder := func() string {
		return get(t, "get", "lease", "-n", "nginx-operator-system", "nginx-operator-controller", "-o", "jsonpath={.spec.holderIdentity}")
	}
	firstLeader := leaseHolder()
	if firstLeader == "" {
		t.Fatal("no leader election Lease")
	}
	// The default lease settings are what this test measures the failover with.
	if d := get(t, "get", "lease", "-n", "nginx-operator-system", "nginx-operator-controller", "-o", "jsonpath={.spec.leaseDurationSeconds}"); d != "15" {
		t.Fatalf("Lease duration %qs; the failover is measured with the default 15s", d)
	}
	// Something for nginx_operator_instances to count.
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "before-failover", "--ignore-not-found", "--wait=false") })
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: before-failover, namespace: default}\n", "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "ngx/before-failover")

	standby, metricsPort, probePort := startStandbyController(t, args)
	t.Cleanup(func() {
		// Until it replaces the leader in the PID file, nothing else would stop it.
		if t.Failed() {
			_ = standby.Kill()
		}
	})
	// The standby tries for the Lease when it starts and then every retry period (2s), the
	// leader renews it every retry period too: after the standby's first try and two
	// renewals, it has found a healthy leader at least twice.
	waitFor(t, 3*time.Minute, "the standby's first try for the Lease", func() bool {
		// client-go's leader elector logs it ("Attempting to acquire leader lease...").
		return strings.Contains(strings.ToLower(standby.Log()), "attempting to acquire leader lease")
	})
	renewTime := func() string {
		return get(t, "get", "lease", "-n", "nginx-operator-system", "nginx-operator-controller", "-o", "jsonpath={.spec.renewTime}")
	}
	for renewal, last := 1, renewTime(); renewal <= 2; renewal++ {
		waitFor(t, 3*time.Minute, fmt.Sprintf("renewal %d of the Lease by the leader", renewal), func() bool {
			now := renewTime()
			if now != last {
				last = now
				return true
			}
			return false
		})
	}
	if holder := leaseHolder(); holder != firstLeader {
		t.Fatalf("the standby took the Lease from a healthy leader: %q -> %q", firstLeader, holder)
	}
	if n := controllerMetricAt(t, metricsPort, "nginx_operator_reconciles_total"); n != 0 {
		t.Errorf("the standby reconciled %v times while not leading", n)
	}
	// Only the leader reports the gauge, so a sum over both replicas counts each once.
	leaderInstances := controllerMetric(t, `nginx_operator_instances{condition="Available",status="True"}`)
	standbyInstances := controllerMetricAt(t, metricsPort, `nginx_operator_instances{condition="Available",status="True"}`)
	if leaderInstances < 1 || standbyInstances != 0 {
		t.Errorf("nginx_operator_instances{Available=True}: leader %v, standby %v; want at least 1 from the leader only", leaderInstances, standbyInstances)
	}

	// Kill the leader without letting it release the Lease.
	raw, _ := os.ReadFile(pidFile)
	leaderPID, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	killed := time.Now()
	if err := syscall.Kill(leaderPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// local-down.sh and the other tests now use the standby.
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(standby.PID())), 0o644); err != nil {
		t.Fatal(err)
	}
	ports["CONTROLLER_METRICS_PORT"], ports["CONTROLLER_PROBE_PORT"] = metricsPort, probePort

	// A change made right after the kill waits for the new leader: the time to its
	// reconcile is what users see of a failover.
	mustKubectl(t, "", "patch", "ngx", "before-failover", "--type", "merge", "-p", `{"spec":{"replicas":2}}`)
	generation := get(t, "get", "ngx", "before-failover", "-o", "jsonpath={.metadata.generation}")

	// The standby counts the 15s lease from the last renewal it observed (renewals come
	// every 2s) and retries every 2s: the takeover should land 15-19s after the kill. The
	// times are logged, not judged; the timeouts only bound a takeover that never comes.
	var tookOver, reconciled time.Duration
	waitFor(t, 2*time.Minute, "the standby to take over and reconcile the change made after the kill", func() bool {
		if h := leaseHolder(); tookOver == 0 && h != "" && h != firstLeader {
			tookOver = time.Since(killed)
		}
		// observedGeneration is written after the Deployment was applied with 2 replicas.
		if reconciled == 0 && get(t, "get", "ngx", "before-failover", "-o", "jsonpath={.status.observedGeneration}") == generation &&
			get(t, "get", "deployment", "before-failover", "-o", "jsonpath={.spec.replicas}") == "2" {
			reconciled = time.Since(killed)
		}
		return tookOver > 0 && reconciled > 0
	})
	t.Logf("leader killed (default lease settings: 15s lease, 10s renew deadline, 2s retry): the standby %s took the Lease %s after the kill and reconciled a change made after the kill %s after it",
		leaseHolder(), tookOver.Round(100*time.Millisecond), reconciled.Round(100*time.Millisecond))
	failover := framework.Measure(t, "controller-leader-failover")
	failover.Duration("lease-taken", tookOver, "the standby took the Lease after the leader was killed")
	failover.Duration("change-reconciled", reconciled, "a change made right after the kill was reconciled, after the kill")
	if reconciled < tookOver {
		t.Errorf("the change was reconciled %s after the kill, before any replica held the Lease (%s)", reconciled, tookOver)
	}

	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "after-failover", "--ignore-not-found", "--wait=false") })
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: after-failover, namespace: default}\n", "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "90s", "ngx/after-failover")
	if n := controllerMetricAt(t, metricsPort, "nginx_operator_reconciles_total"); n == 0 {
		t.Error("the new leader has not reconciled")
	}
	if n := controllerMetricAt(t, metricsPort, `nginx_operator_instances{condition="Available",status="True"}`); n < 2 {
		t.Errorf("the new leader reports nginx_operator_instances{Available=True} = %v, want both NginxOperators", n)
	}
}

// startStandbyController starts a second controller with the leader's flags on its own
// metrics and probe ports and waits for its /readyz. A port found free can be taken
// before the controller binds it (other suites run in parallel), so a start that fails
// on a bind error is retried on new ports.
func startStandbyController(t *testing.T, leaderArgs []string) (*framework.Process, int, int) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		metricsPort, probePort := framework.MustFreePort(t), framework.MustFreePort(t)
		args := replaceFlag(replaceFlag(leaderArgs, "--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metricsPort)),
			"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probePort))
		logName := fmt.Sprintf("nginx-operator-controller-standby-%d.log", attempt)
		standby := startDetached(t, args, logName)
		err := standby.WaitUntil(3*time.Minute, 500*time.Millisecond, func() bool {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort))
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		if err == nil {
			return standby, metricsPort, probePort
		}
		if attempt < 3 && errors.Is(err, framework.ErrPortTaken) {
			continue
		}
		t.Fatalf("the standby controller did not become ready: %v; its log:\n%s", err, standby.Log())
	}
}
