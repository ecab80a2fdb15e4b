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
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// hostState is what a real node can leave behind on this machine.
type hostState struct {
	sets    map[string]map[string]bool // kind -> entries
	sysctls map[string]string
}

// fixedDirs are the paths kubelet, containerd and CNI use outside the state directory.
var fixedDirs = []string{"/var/log/containers", "/var/log/pods", "/var/lib/kubelet", "/var/lib/cni", "/run/netns", "/run/containerd", "/opt/containerd"}

var sysctlFiles = []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/bridge/bridge-nf-call-iptables"}

// savedSysctlNames are the names hack/lib-node.sh saves sysctlFiles under in its node directory.
var savedSysctlNames = map[string]string{
	"/proc/sys/net/ipv4/ip_forward":                "saved-ip_forward",
	"/proc/sys/net/bridge/bridge-nf-call-iptables": "saved-bridge_nf_call_iptables",
}

// withSavedSysctls returns the settings with those the node saved when it started
// in place of the snapshot's.
func (h hostState) withSavedSysctls(nodeDir string) map[string]string {
	out := map[string]string{}
	for f, v := range h.sysctls {
		out[f] = v
		if data, err := os.ReadFile(filepath.Join(nodeDir, savedSysctlNames[f])); err == nil {
			out[f] = strings.TrimSpace(string(data))
		}
	}
	return out
}

func snapshotHost() hostState {
	h := hostState{sets: map[string]map[string]bool{}, sysctls: map[string]string{}}
	add := func(kind string, entries ...string) {
		if h.sets[kind] == nil {
			h.sets[kind] = map[string]bool{}
		}
		for _, e := range entries {
			if e = strings.TrimSpace(e); e != "" {
				h.sets[kind][e] = true
			}
		}
	}
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 {
				add("mount", f[4])
			}
		}
	}
	for _, family := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, _ := exec.Command(family+"-save", "-t", table).Output()
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, ":") || strings.HasPrefix(line, "-A") {
					add(family, table+" "+strings.SplitN(line, " [", 2)[0])
				}
			}
		}
	}
	out, _ := exec.Command("ip", "-o", "link", "show").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			add("link", strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"))
		}
	}
	out, _ = exec.Command("ip", "route", "show").Output()
	add("route", strings.Split(string(out), "\n")...)
	for _, dir := range fixedDirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		add("dir", dir)
		for _, e := range entries {
			add("dir", filepath.Join(dir, e.Name()))
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods*")
	add("cgroup", cgroups...)
	for _, f := range sysctlFiles {
		if data, err := os.ReadFile(f); err == nil {
			h.sysctls[f] = strings.TrimSpace(string(data))
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		line := fmt.Sprintf("%s %s", filepath.Base(filepath.Dir(p)), strings.ReplaceAll(string(data), "\x00", " "))
		// A container that outlived its node still sits in a pod cgroup.
		if cg, err := os.ReadFile(filepath.Join(filepath.Dir(p), "cgroup")); err == nil && strings.Contains(string(cg), "kubepods") {
			line += " [in a kubepods cgroup]"
		}
		add("process", line)
	}
	return h
}

// leftoversSince lists what is here now and was not before, processes and mounts of the
// state directory, and host settings that were not restored.
func (h hostState) leftoversSince(before hostState, stateDir string) []string {
	var left []string
	for kind, entries := range h.sets {
		for e := range entries {
			switch {
			case kind == "process":
				if strings.Contains(e, stateDir) || strings.HasSuffix(e, "[in a kubepods cgroup]") {
					left = append(left, "process: "+e)
				}
			case !before.sets[kind][e]:
				left = append(left, kind+": "+e)
			}
		}
	}
	for f, v := range before.sysctls {
		if h.sysctls[f] != v {
			left = append(left, fmt.Sprintf("sysctl %s: %s, was %s", f, h.sysctls[f], v))
		}
	}
	if _, err := os.Stat(stateDir); err == nil {
		left = append(left, "state directory: "+stateDir)
	}
	sort.Strings(left)
	return left
}
