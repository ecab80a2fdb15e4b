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
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestTrafficGuardsAreInPlace checks, while the node runs, that the guards that keep the
// node's traffic on this machine are installed and come first: nothing to or from the
// pod, Service and fake-pod ranges may use an interface but the bridge and loopback.
func TestTrafficGuardsAreInPlace(t *testing.T) {
	const guard = "NGINX-OPERATOR-GUARD"
	for hook, chain := range map[string]string{"INPUT": guard + "-IN", "FORWARD": guard + "-FWD", "OUTPUT": guard + "-OUT"} {
		rules := iptables(t, "-S", hook)
		if len(rules) < 2 || rules[1] != fmt.Sprintf("-A %s -j %s", hook, chain) {
			t.Errorf("%s does not jump to %s first: %q", hook, chain, rules)
		}
	}
	out := strings.Join(iptables(t, "-S", guard+"-OUT"), "\n")
	fwd := strings.Join(iptables(t, "-S", guard+"-FWD"), "\n")
	in := strings.Join(iptables(t, "-S", guard+"-IN"), "\n")
	for _, cidr := range []string{"10.88.0.0/16", "10.96.0.0/16", "10.244.0.0/16"} {
		for name, rules := range map[string]string{"OUT": out, "FWD": fwd, "IN": in} {
			if !strings.Contains(rules, "-d "+cidr+" -j DROP") {
				t.Errorf("%s-%s does not drop traffic to %s:\n%s", guard, name, cidr, rules)
			}
		}
	}
	for _, want := range []string{"-o lo -j RETURN", "-o ngxop0 -j RETURN"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s-OUT lacks %q:\n%s", guard, want, out)
		}
	}
	if !strings.Contains(fwd, "-s 10.88.0.0/16 -j DROP") {
		t.Errorf("%s-FWD does not drop pod traffic leaving by another interface:\n%s", guard, fwd)
	}
	if port := stack.Ports["KUBE_APISERVER_PORT"]; !strings.Contains(in, fmt.Sprintf("--dport %d -j DROP", port)) {
		t.Errorf("%s-IN does not close kube-apiserver's port %d to other interfaces:\n%s", guard, port, in)
	}
	route, err := exec.Command("ip", "route", "show", "10.96.0.0/16").Output()
	if err != nil || !strings.Contains(string(route), "dev ngxop0") {
		t.Errorf("the Service range is not routed to the bridge: %q %v", route, err)
	}
}

func iptables(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("iptables", append([]string{"-w"}, args...)...).Output()
	if err != nil {
		t.Fatalf("iptables %s: %v", strings.Join(args, " "), err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
