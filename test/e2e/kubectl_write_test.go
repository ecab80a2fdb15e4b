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
	"strings"
	"testing"

	"github.com/example/nginx-operator/test/framework"
)

// TestInProcessWritesAnswerAsKubectl: the tests' common writes and waits are answered in
// process (test/framework/kubectlwrite.go); each form prints what kubectl prints, its errors
// and warnings included, fails where kubectl fails, and does what kubectl does. A write
// that succeeds acts on an object of its own each way (NAME-bykubectl, NAME-inprocess),
// compared with the names swapped; one that fails acts on the same object.
func TestInProcessWritesAnswerAsKubectl(t *testing.T) {
	t.Parallel()
	const ns = "in-process-write"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() {
		kubectl(t, "", "delete", "namespace", ns, ns+"-bykubectl", ns+"-inprocess", "--wait=false", "--ignore-not-found")
	})
	mustKubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: taken, namespace: in-process-write}
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: web, namespace: in-process-write}
spec: {replicas: 1}
`, "apply", "--server-side", "-f", "-")

	itself := kc
	itself.AlwaysRun = true
	// Each form with NAME standing for the object of each side, run in the
	// namespace ns unless it names its own (own).
	forms := []struct {
		stdin string
		args  []string
		own   bool
	}{
		{"", []string{"create", "namespace", "in-process-write-NAME"}, true},
		{"", []string{"create", "ns", "in-process-write"}, true},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a-NAME}\ndata: {k: v}\n---\n" +
			"apiVersion: operator.example.com/v1alpha1\nkind: NginxOperator\nmetadata: {name: old-NAME}\nspec: {replicas: 1}\n",
			[]string{"create", "-f", "-"}, false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b-NAME}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: taken}\n",
			[]string{"create", "-f", "-"}, false},
		{"apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: bad}\nspec: {replicas: -1}\n", []string{"create", "-f", "-"}, false},
		{"apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: bad}\nspec: {replicas: -1, canary: {analysisSeconds: 1}}\n", []string{"create", "-f", "-"}, false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unknown}\nnotAField: 1\n", []string{"create", "-f", "-"}, false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", []string{"--as=nobody", "create", "-f", "-"}, false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c-NAME}\n", []string{"create", "-f", "-", "-n", ns}, true},
		{"", []string{"delete", "cm", "a-NAME"}, false},
		{"", []string{"delete", "configmap/b-NAME", "configmap/c-NAME", "--wait=false"}, false},
		{"", []string{"delete", "ngx", "old-NAME", "--timeout=2m"}, false},
		{"", []string{"delete", "cm", "missing"}, false},
		{"", []string{"delete", "cm", "missing", "also-missing"}, false},
		{"", []string{"delete", "cm", "missing", "--ignore-not-found"}, false},
		{"", []string{"--as=nobody", "delete", "cm", "taken"}, false},
		{"", []string{"delete", "namespace", "in-process-write-NAME", "--wait=false"}, true},
		{"", []string{"wait", "--for=condition=Ready", "--timeout=2m", "ngx/web"}, false},
		{"", []string{"wait", "--for", "condition=Ready=True", "--timeout", "2m", "ngx", "web"}, false},
		{"", []string{"wait", "--for=condition=NoSuchCondition", "--timeout=2s", "cm/taken"}, false},
		{"", []string{"wait", "--for=condition=Ready", "ngx/missing"}, false},
	}
	for _, f := range forms {
		run := func(k framework.Kubectl, side string) (string, string, bool) {
			args := make([]string, 0, len(f.args)+2)
			if !f.own {
				args = append(args, "-n", ns)
			}
			for _, a := range f.args {
				args = append(args, strings.ReplaceAll(a, "NAME", side))
			}
			out, errOut, err := k.Run(t, strings.ReplaceAll(f.stdin, "NAME", side), args...)
			return strings.ReplaceAll(out, "-"+side, "-NAME"), strings.ReplaceAll(errOut, "-"+side, "-NAME"), err != nil
		}
		if !kc.InProcess(f.args...) {
			t.Errorf("kubectl %s is not answered in process", strings.Join(f.args, " "))
		}
		want, wantErr, wantFailed := run(itself, "bykubectl")
		got, gotErr, failed := run(kc, "inprocess")
		if got != want || gotErr != wantErr || failed != wantFailed {
			t.Errorf("kubectl %s\nin process: failed %t\n%s\nstderr: %s\nkubectl: failed %t\n%s\nstderr: %s",
				strings.Join(f.args, " "), failed, got, gotErr, wantFailed, want, wantErr)
		}
	}
}
