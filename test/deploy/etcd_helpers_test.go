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

package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

const (
	etcdStatefulSet = "nginx-operator-etcd"
	etcdSelector    = "app.kubernetes.io/name=nginx-operator-etcd"
)

// etcdctl runs etcdctl in an etcd member's pod against that member, with the member's peer
// certificate (a client certificate of the etcd CA), as hack/etcd-replace-member.sh does.
// Every caller only reads, or compacts (run again, etcd answers that the revision is
// compacted), so an exec that kubectl lost (execLost) is run again, for up to 30 s.
func etcdctl(t *testing.T, pod string, args ...string) (string, error) {
	t.Helper()
	full := append([]string{"exec", "-n", systemNS, pod, "-c", "etcd", "--", "etcdctl",
		"--endpoints=https://127.0.0.1:2379", "--command-timeout=10s",
		"--cacert=/etc/etcd/tls/peer/ca.crt", "--cert=/etc/etcd/tls/peer/tls.crt", "--key=/etc/etcd/tls/peer/tls.key"}, args...)
	var out, errOut string
	var err error
	framework.Poll(30*time.Second, 2*time.Second, func() bool {
		out, errOut, err = kubectl(t, "", full...)
		return err == nil || !execLost(errOut)
	})
	if err != nil {
		return out, fmt.Errorf("etcdctl %s in %s: %v: %s", strings.Join(args, " "), pod, err, strings.TrimSpace(errOut))
	}
	return out, nil
}

// execLost tells from kubectl exec's stderr that the exec failed on the way (a stream cut
// on a loaded machine: "error: closed all streams"), not that etcdctl failed (kubectl then
// reports its exit code) nor that the API server or kubelet refused it (a pod or container
// that is not there).
func execLost(stderr string) bool {
	for _, answer := range []string{"command terminated with exit code", "Error from server", "unable to upgrade connection"} {
		if strings.Contains(stderr, answer) {
			return false
		}
	}
	return true
}

// memberStatus is what `etcdctl endpoint status -w json` says of one member.
type memberStatus struct {
	Status struct {
		Header struct {
			MemberID uint64 `json:"member_id"`
			Revision int64  `json:"revision"`
		} `json:"header"`
		Leader      uint64   `json:"leader"`
		DBSize      int64    `json:"dbSize"`
		DBSizeInUse int64    `json:"dbSizeInUse"`
		RaftTerm    uint64   `json:"raftTerm"`
		Errors      []string `json:"errors"`
	} `json:"Status"`
}

// etcdStatus asks the member in pod about itself.
func etcdStatus(t *testing.T, pod string) (memberStatus, error) {
	t.Helper()
	out, err := etcdctl(t, pod, "endpoint", "status", "-w", "json")
	if err != nil {
		return memberStatus{}, err
	}
	var statuses []memberStatus
	if err := json.Unmarshal([]byte(out), &statuses); err != nil || len(statuses) != 1 {
		return memberStatus{}, fmt.Errorf("endpoint status of %s: %v: %s", pod, err, out)
	}
	return statuses[0], nil
}

// etcdLeader finds the pod of the current leader among the Ready members; "" if none of
// them knows a leader.
func etcdLeader(t *testing.T) (pod string, term uint64) {
	t.Helper()
	ids := map[uint64]string{}
	var leader uint64
	for _, p := range readyPods(t, systemNS, etcdSelector) {
		st, err := etcdStatus(t, p)
		if err != nil {
			continue
		}
		ids[st.Status.Header.MemberID] = p
		if st.Status.Leader != 0 {
			leader, term = st.Status.Leader, st.Status.RaftTerm
		}
	}
	return ids[leader], term
}

// etcdMembers lists the cluster's members as "name started|unstarted learner?" lines,
// asked of pod.
func etcdMembers(t *testing.T, pod string) []string {
	t.Helper()
	out, err := etcdctl(t, pod, "member", "list")
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, ", ")
		if len(f) == 6 {
			m := f[2] + " " + f[1]
			if f[5] == "true" {
				m += " learner"
			}
			members = append(members, m)
		}
	}
	return members
}

// waitForEtcdMembers waits until all three members run Ready, each reports the same
// leader, and the member list has the three started voting members.
func waitForEtcdMembers(t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	want := "nginx-operator-etcd-0 started,nginx-operator-etcd-1 started,nginx-operator-etcd-2 started"
	return waitFor(t, timeout, "3 Ready etcd members, one leader, the member list complete", func() bool {
		pods := readyPods(t, systemNS, etcdSelector)
		if len(pods) != 3 {
			return false
		}
		leaders := map[uint64]bool{}
		for _, p := range pods {
			st, err := etcdStatus(t, p)
			if err != nil || st.Status.Leader == 0 {
				return false
			}
			leaders[st.Status.Leader] = true
		}
		members := etcdMembers(t, pods[0])
		slices.Sort(members)
		return len(leaders) == 1 && strings.Join(members, ",") == want
	})
}

// userScript runs a script of hack/ the way a user runs it: kubectl on the cluster of
// $KUBECONFIG.
func userScript(t *testing.T, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(stack.RepoRoot, "hack", name), args...)
	cmd.Env = append(stack.Env(), "KUBECONFIG="+stack.Kubeconfig(), "KUBECTL=/usr/bin/kubectl")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// nodeScript runs bash with hack/lib-local.sh and hack/lib-etcd-volumes.sh sourced, for the
// local node's etcd volumes.
func nodeScript(script string) (string, error) {
	cmd := exec.Command("bash", "-c", "set -euo pipefail; source hack/lib-local.sh; source hack/lib-etcd-volumes.sh; "+script)
	cmd.Env = stack.Env()
	cmd.Dir = stack.RepoRoot
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("%s: %v: %s", script, err, exit.Stderr)
		}
		return "", fmt.Errorf("%s: %v", script, err)
	}
	return string(out), nil
}

// runJobFromCronJob starts a Job from one of artifacts/deploy's CronJobs, as an administrator
// runs one at once, waits until it completes and returns its log; a Job that fails stops
// the test with the log.
func runJobFromCronJob(t *testing.T, cronJob, job string) (string, time.Duration) {
	t.Helper()
	mustKubectl(t, "", "create", "job", "-n", systemNS, "--from=cronjob/"+cronJob, job)
	t.Cleanup(func() { kubectl(t, "", "delete", "job", "-n", systemNS, job, "--ignore-not-found") })
	var conditions string
	took := waitFor(t, 3*time.Minute, "job "+job+" to complete or fail", func() bool {
		conditions = get(t, "get", "job", "-n", systemNS, job, "-o", `jsonpath={.status.conditions[?(@.status=="True")].type}`)
		return strings.Contains(conditions, "Complete") || strings.Contains(conditions, "Failed")
	})
	logs, _, _ := kubectl(t, "", "logs", "-n", systemNS, "job/"+job)
	if !strings.Contains(conditions, "Complete") {
		t.Fatalf("job %s from cronjob/%s: %s; log:\n%s", job, cronJob, conditions, logs)
	}
	return logs, took
}
