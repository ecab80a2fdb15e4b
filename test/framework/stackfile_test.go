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

package framework

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The scripts and the suites read the same description: every port variable the suites
// set is one the scripts define, with the default the file gives.
func TestStackFileIsReadAlikeByScriptsAndSuites(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	kwok, err := PortVars(root, KwokStack)
	if err != nil {
		t.Fatal(err)
	}
	real, err := PortVars(root, RealStack)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kwok, "KWOK_PORT") || slices.Contains(kwok, "KUBELET_HEALTHZ_PORT") {
		t.Errorf("kwok stack ports %v: want KWOK_PORT and no kubelet port", kwok)
	}
	if !slices.Contains(real, "KUBELET_HEALTHZ_PORT") || slices.Contains(real, "KWOK_PORT") || slices.Contains(real, "OPERATOR_APISERVER_PORT") {
		t.Errorf("real stack ports %v: want the kubelet's, neither kwok's nor our apiserver's (it runs as pods there)", real)
	}
	components, err := readStackFile(root)
	if err != nil {
		t.Fatal(err)
	}
	script := `source hack/lib-local.sh; echo "${COMPONENTS[*]}"; for v in "$@"; do echo "$v=${!v}"; done`
	cmd := exec.Command("bash", append([]string{"-c", script, "bash"}, append(kwok, real...)...)...)
	cmd.Dir = root
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // the defaults, not this environment's overrides
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sourcing hack/lib-local.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var names []string
	for _, c := range components {
		names = append(names, c.name)
	}
	if lines[0] != strings.Join(names, " ") {
		t.Errorf("the scripts' COMPONENTS = %q, the file's %q", lines[0], strings.Join(names, " "))
	}
	defaults := map[string]string{}
	for _, c := range components {
		for i, v := range c.portVars {
			defaults[v] = c.portDefaults[i]
		}
	}
	for _, line := range lines[1:] {
		v, value, _ := strings.Cut(line, "=")
		if value == "" || value != defaults[v] {
			t.Errorf("the scripts set %s=%q, the file says %q", v, value, defaults[v])
		}
	}
}
