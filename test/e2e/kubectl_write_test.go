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
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: taken, namespace: in-process-write}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: taken, namespace: in-process-write}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: taken}
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
		// Changes to one object: patch, scale and label, and what each says when nothing changed.
		{"apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: p-NAME}\nspec: {replicas: 1}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: l-NAME, labels: {keep: x}}\n", []string{"create", "-f", "-"}, false},
		{"", []string{"patch", "ngx", "p-NAME", "--type=merge", "-p", `{"spec":{"replicas":2}}`}, false},
		{"", []string{"patch", "ngx", "p-NAME", "--type=json", "-p", `[{"op":"replace","path":"/spec/replicas","value":3}]`}, false},
		{"", []string{"patch", "cm", "l-NAME", "-p", "data: {k: v}"}, false},
		{"", []string{"patch", "cm/l-NAME", "--type", "merge", "-p", `{"data":{"k":"v"}}`}, false},
		{"", []string{"patch", "ngx", "p-NAME", "--subresource=status", "--type=merge", "-p", `{"status":{"readyReplicas":7}}`}, false},
		{"", []string{"patch", "ngx", "web", "--type=merge", "-p", `{"spec":{"replicas":-1}}`}, false},
		{"", []string{"patch", "ngx", "missing", "--type=merge", "-p", `{}`}, false},
		{"", []string{"--as=nobody", "patch", "ngx", "web", "--type=merge", "-p", `{}`}, false},
		{"", []string{"scale", "ngx", "p-NAME", "--replicas=4"}, false},
		{"", []string{"scale", "ngx/p-NAME", "--replicas", "4"}, false},
		{"", []string{"scale", "ngx", "missing", "--replicas=1"}, false},
		{"", []string{"--as=nobody", "scale", "ngx", "web", "--replicas=1"}, false},
		{"", []string{"label", "cm", "l-NAME", "team=a"}, false},
		{"", []string{"label", "cm/l-NAME", "team=a"}, false},
		{"", []string{"label", "cm", "l-NAME", "team=b", "--overwrite"}, false},
		{"", []string{"label", "cm", "l-NAME", "team-", "e2e.example.com/tier=front"}, false},
		{"", []string{"label", "cm", "l-NAME", "keep-"}, false},
		{"", []string{"label", "cm", "missing", "k=v"}, false},
		{"", []string{"--as=nobody", "label", "cm", "taken", "k=v"}, false},
		// Rights granted and checked.
		{"", []string{"create", "role", "r-NAME", "--verb=get,list", "--verb", "get", "--resource=pods,ngx", "--resource", "nginxoperators/status", "--resource-name=x"}, false},
		{"", []string{"create", "role", "taken", "--verb=get", "--resource=pods"}, false},
		{"", []string{"create", "rolebinding", "rb-NAME", "--clusterrole=view", "--user=u1", "--user", "u2", "--group=g", "--serviceaccount=in-process-write:sa"}, false},
		{"", []string{"create", "rolebinding", "rb2-NAME", "--role=r-NAME", "--user=u"}, false},
		{"", []string{"create", "rolebinding", "taken", "--role=taken", "--user=u"}, false},
		{"", []string{"auth", "can-i", "list", "ngx"}, false},
		{"", []string{"auth", "can-i", "get", "cm/taken"}, false},
		{"", []string{"--as=nobody", "auth", "can-i", "get", "configmaps"}, false},
		{"", []string{"--as=u", "auth", "can-i", "create", "nginxoperators.operator.example.com", "--subresource=rollback"}, false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry-NAME}\n", []string{"create", "--dry-run=server", "-f", "-"}, false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: taken}\n", []string{"create", "-f", "-", "--dry-run=server"}, false},
		{"apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: bad}\nspec: {replicas: -1}\n", []string{"create", "--dry-run=server", "-f", "-"}, false},
		{"", []string{"get", "cm", "dry-NAME", "-o", "name"}, false},
		// Client-side apply of new objects; one that exists is kubectl's own.
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ap-NAME, annotations: {note: x}, labels: {a: b}}\ndata: {k: \"1\", gone: null}\n---\n" +
			"apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: ap-NAME}\nspec: {replicas: 2, image: null}\n",
			[]string{"apply", "-f", "-"}, false},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ap2-NAME, namespace: in-process-write}\n", []string{"apply", "-f", "-", "-n", ns}, true},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ap3-NAME}\n---\napiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: bad}\nspec: {replicas: -1}\n",
			[]string{"apply", "-f", "-"}, false},
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
	// What the changes and grants left behind is the same each way.
	for _, read := range [][]string{
		{"get", "ngx", "p-NAME", "-o", "jsonpath={.spec.replicas} {.metadata.labels}"},
		{"get", "cm", "l-NAME", "-o", "jsonpath={.data} {.metadata.labels}"},
		{"get", "role", "r-NAME", "-o", "jsonpath={.rules}"},
		{"get", "cm", "ap-NAME", "ap2-NAME", "ap3-NAME", "-o", "jsonpath={range .items[*]}{.metadata.annotations} {.metadata.labels} {.data} {.metadata.managedFields[*].manager}{\"\\n\"}{end}"},
		{"get", "ngx", "ap-NAME", "-o", "jsonpath={.metadata.annotations} {.spec.replicas}"},
		{"get", "rolebinding", "rb-NAME", "rb2-NAME", "-o", "jsonpath={range .items[*]}{.roleRef} {.subjects}{\"\\n\"}{end}"},
	} {
		get := func(side string) string {
			args := []string{"-n", ns}
			for _, a := range read {
				args = append(args, strings.ReplaceAll(a, "NAME", side))
			}
			return strings.ReplaceAll(mustKubectl(t, "", args...), "-"+side, "-NAME")
		}
		if byKubectl, inProcess := get("bykubectl"), get("inprocess"); byKubectl != inProcess {
			t.Errorf("kubectl %s: after kubectl's writes\n%s\nafter the in-process writes\n%s", strings.Join(read, " "), byKubectl, inProcess)
		}
	}
}
