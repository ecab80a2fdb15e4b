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
	"context"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestAPIServerKilledDuringCreates sends SIGKILL to the apiserver while 16 workers
// create NginxOperators, starts it again on the same storage and checks that every
// create acknowledged with 201 is there with the uid it was acknowledged with.
func TestAPIServerKilledDuringCreates(t *testing.T) {
	t.Run("embedded etcd", func(t *testing.T) {
		killDuringCreates(t, "embedded-etcd", func(t *testing.T) []string { return nil })
	})
	t.Run("external etcd", func(t *testing.T) {
		killDuringCreates(t, "external-etcd", func(t *testing.T) []string {
			return []string{"--etcd-servers", startEtcd(t).clientURL()}
		})
	})
}

// killDuringCreates runs the fault against an apiserver started with storageArgs
// (none: its embedded etcd in the data directory); storage names it in the figures.
func killDuringCreates(t *testing.T, storage string, storageArgs func(t *testing.T) []string) {
	const workers, ackedBeforeKill = 16, 300
	s := startAPIServer(t, t.TempDir(), storageArgs(t)...)
	load := startCreateLoad(t, s.Client.OperatorV1alpha2().NginxOperators(ns), "kill", workers, false)
	load.waitAcked(ackedBeforeKill, 3*time.Minute)

	pid := s.PID()
	load.setPhase("kill")
	s.kill()
	load.stop()
	t.Logf("killed apiserver pid %d with SIGKILL after %d acknowledged creates; outcomes %s", pid, load.ackedCount(), load.outcomeSummary())

	s.restart()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	check := load.check(ctx, s.Client.OperatorV1alpha2().NginxOperators(ns))
	t.Logf("apiserver kill -9 during %d-worker create load (%s): %s", workers, t.Name(), check)
	check.record(framework.Measure(t, "apiserver-killed-during-creates"), storage)
	check.assertNothingLost(t)
}
