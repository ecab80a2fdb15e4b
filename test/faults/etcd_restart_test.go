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

// TestEtcdKilledAndRestarted sends SIGKILL to the external etcd while workers create
// and read NginxOperators: /readyz must go non-ok and come back by itself once etcd is
// started again on the same data directory and ports, without restarting the
// apiserver, and no acknowledged create may be lost.
func TestEtcdKilledAndRestarted(t *testing.T) {
	// /readyz probes etcd with --etcd-readycheck-timeout, at most every half of it, and
	// answers from the last probe in between: the outage spans several probes.
	const workers, readycheck = 8, 2 * time.Second
	const outage = 5 * readycheck / 2
	etcd := startEtcd(t)
	s := startAPIServer(t, t.TempDir(), "--etcd-servers", etcd.clientURL(), "--etcd-readycheck-timeout", readycheck.String())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	load := startCreateLoad(t, s.Client.OperatorV1alpha2().NginxOperators(ns), "etcd", workers, true)
	load.waitAcked(200, 3*time.Minute)

	load.setPhase("outage")
	killed := time.Now()
	etcd.kill()
	failedChecks, err := waitReadyz(ctx, s, false)
	if err != nil {
		t.Fatalf("/readyz still ok after etcd was killed: %v", err)
	}
	m := framework.Measure(t, "etcd-killed-and-restarted")
	m.Duration("readyz-failing", time.Since(killed), "/readyz not ok after etcd was killed")
	t.Logf("/readyz not ok %s after etcd was killed: %s", time.Since(killed).Round(time.Millisecond), failedChecks)
	time.Sleep(outage) // a fixed period: an outage of a set length is the point
	if ok, checks := s.ready(ctx); ok {
		t.Errorf("/readyz ok again during the etcd outage")
	} else {
		t.Logf("/readyz still not ok after %s of outage: %s", time.Since(killed).Round(time.Millisecond), checks)
	}

	load.setPhase("recovery")
	restarted := time.Now()
	etcd.restart()
	etcdHealthy := time.Since(restarted)
	if _, err := waitReadyz(ctx, s, true); err != nil {
		t.Fatalf("/readyz did not recover after etcd came back (the apiserver was not restarted): %v", err)
	}
	recovered := time.Since(restarted)

	load.setPhase("after")
	ackedAtRecovery := load.ackedCount()
	load.waitAcked(ackedAtRecovery+100, 3*time.Minute)
	load.stop()

	check := load.check(ctx, s.Client.OperatorV1alpha2().NginxOperators(ns))
	t.Logf("etcd SIGKILL for %s under %d-worker create+get load: /readyz ok again %s after etcd restart (etcd healthy after %s), apiserver not restarted; %s",
		restarted.Sub(killed).Round(time.Millisecond), workers, recovered.Round(time.Millisecond), etcdHealthy.Round(time.Millisecond), check)
	m.Duration("readyz-back", recovered-etcdHealthy, "/readyz ok again after etcd was healthy, the apiserver not restarted")
	check.record(m, "load")
	t.Logf("request outcomes by the phase they were sent in: %s", load.outcomeSummary())
	t.Logf("errors seen: %s", load.errorSamples())
	check.assertNothingLost(t)
}

// waitReadyz polls /readyz?verbose until its answer is ok (wantOK) or not, and returns
// the failed checks of the last non-ok answer.
func waitReadyz(ctx context.Context, s *apiserver, wantOK bool) (string, error) {
	for {
		ok, checks := s.ready(ctx)
		if ok == wantOK {
			return checks, nil
		}
		select {
		case <-ctx.Done():
			return checks, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
