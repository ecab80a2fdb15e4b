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
	"slices"
	"strings"
	"testing"
)

// TestInProcessGetAnswersAsKubectl: the tests' reads are answered in process
// (test/framework/kubectlget.go); each form they use prints what kubectl prints, its
// errors and warnings included, and fails where kubectl fails.
func TestInProcessGetAnswersAsKubectl(t *testing.T) {
	t.Parallel()
	const ns = "in-process-get"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	// What is compared does not change between the two reads: the ConfigMaps, and of the
	// NginxOperator its spec and name (the controller writes its status meanwhile).
	mustKubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: in-process-get, labels: {app: get}}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: in-process-get, labels: {app: get}}
data: {k: "2", n: "3000000"}
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: web, namespace: in-process-get}
spec: {replicas: 2}
`, "apply", "--server-side", "-f", "-")

	itself := kc
	itself.AlwaysRun = true
	for _, args := range [][]string{
		{"get", "cm", "a", "-o", "json"},
		{"get", "configmaps", "-l", "app=get", "-o", "yaml"},
		{"get", "configmap/a", "configmap/b", "-o", "name"},
		{"get", "cm", "a", "b", "-o", "jsonpath={.items[*].data.k}"},
		{"get", "cm", "b", "-o", "jsonpath={.data}"},
		{"get", "cm", "-l", "app=none", "-o", "name"},
		{"get", "cm", "-l", "app=none", "-o", "json"},
		{"get", "ngx", "web", "-o", "jsonpath={.spec.replicas} {.spec.missing}"},
		{"get", "nginxoperators.operator.example.com", "-o", "jsonpath={.items[0].metadata.name}"},
		{"get", "nginxoperators.v1alpha1.operator.example.com/web", "-o", "jsonpath={.apiVersion} {.spec.replicas}"},
		{"get", "ngx", "missing"},
		{"get", "ngx", "missing", "-o", "name"},
		{"get", "ngx", "missing", "--ignore-not-found", "-o", "name"},
		{"get", "cm", "a", "missing", "-o", "name"},
		{"get", "cm", "missing", "also-missing", "-o", "json"},
		{"--as=nobody", "get", "ngx", "-o", "json"},
		{"get", "no-such-type", "-o", "name"},
		{"get", "ns", ns, "-o", "jsonpath={.metadata.name}"},
		{"get", "deploy", "-A", "-l", "app=none", "-o", "name"},
		{"get", "events", "--field-selector", "involvedObject.name=none", "-o", "name"},
		{"--as=nobody", "get", "cm", "a", "-o", "name"},
		{"--as=nobody", "--as-group=system:authenticated", "get", "ngx", "-o", "name"},
		{"get", "--raw", "/apis/operator.example.com"},
		{"get", "--raw", "/apis/no.such.group/v1"},
		{"get", "cm", "-l", "app=none", "-o", "jsonpath={.items[0].metadata.name}"},
		{"get", "ngx", "-o", "jsonpath={.items[0].metadata.name}", "--as=nobody"},
	} {
		if args[1] != "--raw" {
			args = append([]string{"-n", ns}, args...)
		}
		table := !slices.Contains(args, "-o") && !slices.Contains(args, "--raw") // kubectl's own: it prints tables
		if !table && !kc.InProcess(args...) {
			t.Errorf("kubectl %s is not answered in process", strings.Join(args, " "))
		}
		got, gotErr, err := kc.Run(t, "", args...)
		want, wantErr, wantFailed := itself.Run(t, "", args...)
		if got != want || gotErr != wantErr || (err != nil) != (wantFailed != nil) {
			t.Errorf("kubectl %s\nin process: failed %t\n%s\nstderr: %s\nkubectl: failed %t\n%s\nstderr: %s",
				strings.Join(args, " "), err != nil, got, gotErr, wantFailed != nil, want, wantErr)
		}
	}
}
