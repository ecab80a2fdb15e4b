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

package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The exporter, the sidecar of every pod with metrics on, needs no Kubernetes API types: the
// reload contract it shares with the controller (package reload) imports only the
// standard library. k8s.io/api/core/v1 alone is about 5 MB of the binary; this fails,
// naming the import chain, if a change links any of k8s.io/api again.
func TestExporterLinksNoKubernetesAPI(t *testing.T) {
	const (
		exporter = "github.com/example/nginx-operator/cmd/nginx-exporter"
		reload   = "github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	)
	graph, standard := listDeps(t, exporter)
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		if strings.HasPrefix(pkg, "k8s.io/api/") {
			t.Errorf("nginx-exporter links %s: %s", pkg, strings.Join(importChain(graph, exporter, pkg), " -> "))
		}
	}
	if _, ok := graph[reload]; !ok {
		t.Fatalf("nginx-exporter no longer imports %s; update this test", reload)
	}
	for _, pkg := range graph[reload] {
		if !standard[pkg] {
			t.Errorf("%s imports %s; it may import only the standard library", reload, pkg)
		}
	}
}

// listDeps runs go list -deps on pkg: each package's imports, and which are standard.
func listDeps(t *testing.T, pkg string) (graph map[string][]string, standard map[string]bool) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{.ImportPath}} {{.Standard}} {{join .Imports " "}}`, pkg).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	graph, standard = map[string][]string{}, map[string]bool{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		graph[fields[0]] = fields[2:]
		standard[fields[0]] = fields[1] == "true"
	}
	return graph, standard
}

// importChain is a shortest path of imports from root to target in graph.
func importChain(graph map[string][]string, root, target string) []string {
	from := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if pkg == target {
			chain := []string{}
			for p := target; p != ""; p = from[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, imp := range graph[pkg] {
			if _, seen := from[imp]; !seen {
				from[imp] = pkg
				queue = append(queue, imp)
			}
		}
	}
	return []string{root, "...", target}
}
