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

package scripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// memberURL is the address of the etcd member of pod nginx-operator-etcd-<ordinal> in the
// namespace ns, without a port.
func memberURL(ns string, ordinal int) string {
	return fmt.Sprintf("https://nginx-operator-etcd-%d.nginx-operator-etcd.%s.svc", ordinal, ns)
}

const defaultNamespace = "nginx-operator-system"

// replaceMember runs hack/etcd-replace-member.sh 2 against testdata/fake-kubectl.sh, whose
// cluster starts with three voting members; cut names the kinds of exec whose first run
// fails with a closed stream, and env is added to the script's environment (NAMESPACE=
// there also places the fake cluster's members). It returns the state directory, the
// script's output and its error.
func replaceMember(t *testing.T, cut []string, env ...string) (string, string, error) {
	t.Helper()
	ns := defaultNamespace
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "NAMESPACE="); ok {
			ns = v
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	var members strings.Builder
	for i, id := range []string{"a1", "b2", "c3"} {
		fmt.Fprintf(&members, "%s, started, nginx-operator-etcd-%d, %s:2380, %s:2379, false\n", id, i, memberURL(ns, i), memberURL(ns, i))
	}
	for name, content := range map[string]string{
		"members": members.String(),
		"pvc-uid": "uid-old\n",
		"cut":     strings.Join(cut, "\n") + "\n",
	} {
		if err := os.WriteFile(filepath.Join(state, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(root, "hack", "etcd-replace-member.sh"), "2")
	// NAMESPACE of the test's own environment does not count; only env's.
	cmd.Env = append(withoutNamespace(os.Environ()), append([]string{
		"KUBECTL=" + filepath.Join(root, "test", "scripts", "testdata", "fake-kubectl.sh"),
		"STATE=" + state, "TIMEOUT=60"}, env...)...)
	out, err := cmd.CombinedOutput()
	return state, string(out), err
}

func readState(t *testing.T, state, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestReplaceMemberSurvivesCutExecStreams cuts the first member list before etcdctl runs
// and the first remove, add and promote after it ran: the script must still end with the
// member replaced once, judging each change by the member list rather than by the exit
// status of an exec whose answer was lost (CI failed on such a cut with the script
// stopping at its first etcdctl change).
func TestReplaceMemberSurvivesCutExecStreams(t *testing.T) {
	t.Parallel()
	kinds := []string{"member list", "member remove", "member add", "member promote"}
	state, out, err := replaceMember(t, kinds)
	if err != nil {
		t.Fatalf("hack/etcd-replace-member.sh 2: %v\n%s", err, out)
	}
	if got := strings.Fields(strings.ReplaceAll(readState(t, state, "was-cut"), "member ", "member-")); strings.Join(got, " ") != "member-list member-remove member-add member-promote" {
		t.Errorf("execs cut: %v, want each of %v once (the test did not exercise them all)", got, kinds)
	}
	lines := strings.Split(strings.TrimSpace(readState(t, state, "members")), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d members after the replacement, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	target := lines[2]
	url := memberURL(defaultNamespace, 2) + ":2380"
	if fields := strings.Split(target, ", "); fields[0] == "c3" || fields[1] != "started" || fields[2] != "nginx-operator-etcd-2" || fields[3] != url || fields[5] != "false" {
		t.Errorf("the replaced member is %q, want a new ID, started, named nginx-operator-etcd-2, at %s, voting", target, url)
	}
	if !strings.Contains(out, "nginx-operator-etcd-2 replaced") {
		t.Errorf("the script did not report the replacement:\n%s", out)
	}
}

// TestReplaceMemberReportsARefusedChange: when etcd keeps refusing to add the member, the
// script stops after its attempts and says which change and what etcd said.
func TestReplaceMemberReportsARefusedChange(t *testing.T) {
	t.Parallel()
	_, out, err := replaceMember(t, nil, "FAKE_REFUSE_ADD=etcdserver: unhealthy cluster")
	if err == nil {
		t.Fatalf("hack/etcd-replace-member.sh 2 succeeded though etcd refused every add:\n%s", out)
	}
	for _, want := range []string{"adding nginx-operator-etcd-2 as a learner: not done after 5 attempts", "etcdserver: unhealthy cluster"} {
		if !strings.Contains(out, want) {
			t.Errorf("the script's output lacks %q:\n%s", want, out)
		}
	}
}

func withoutNamespace(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "NAMESPACE=") {
			out = append(out, e)
		}
	}
	return out
}

// TestReplaceMemberInAnotherNamespace: with NAMESPACE (a Helm release outside
// nginx-operator-system) every kubectl call goes to that namespace and the member comes
// back under its peer URL there.
func TestReplaceMemberInAnotherNamespace(t *testing.T) {
	t.Parallel()
	const ns = "web-system"
	state, out, err := replaceMember(t, nil, "NAMESPACE="+ns)
	if err != nil {
		t.Fatalf("NAMESPACE=%s hack/etcd-replace-member.sh 2: %v\n%s", ns, err, out)
	}
	calls := strings.Fields(readState(t, state, "namespaces"))
	if len(calls) == 0 {
		t.Error("kubectl was never called with -n")
	}
	for _, got := range calls {
		if got != ns {
			t.Errorf("kubectl was called in the namespace %s, want only %s", got, ns)
			break
		}
	}
	url := memberURL(ns, 2) + ":2380"
	if lines := strings.Split(strings.TrimSpace(readState(t, state, "members")), "\n"); len(lines) != 3 || !strings.Contains(lines[2], ", "+url+", ") {
		t.Errorf("members after the replacement:\n%s\nwant nginx-operator-etcd-2 at %s", readState(t, state, "members"), url)
	}
}
