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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// TestKubectlNginxPlugin runs the kubectl plugin as a user would: built from
// ./cmd/kubectl-nginx onto PATH, found by /usr/bin/kubectl as "kubectl nginx". Three content
// changes make revisions bounded by spec.revisionHistoryLimit; history, diff and rollback
// read and restore them; a reader of revisions who may not read ConfigMaps sees no
// ConfigMap data in them, nor in the rendered view of what the pods load.
func TestKubectlNginxPlugin(t *testing.T) {
	t.Parallel()
	const ns = "e2e-kubectl-nginx"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	// The plugin is a module of its own (cmd/kubectl-nginx), built there as make build builds
	// bin/kubectl-nginx; bin/ holds no other kubectl plugin.
	binary, err := framework.ProductBinary(repoRoot, filepath.Join(repoRoot, "cmd", "kubectl-nginx"), ".")
	if err != nil {
		t.Fatal(err)
	}
	pluginDir := filepath.Dir(binary)
	plugin := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// kubectl takes no flag before a plugin's name: the kubeconfig comes from the environment.
		cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"nginx"}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+pluginDir+":"+os.Getenv("PATH"), "KUBECONFIG="+stack.Kubeconfig())
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	mustPlugin := func(args ...string) string {
		t.Helper()
		out, errOut, err := plugin(args...)
		if err != nil {
			t.Fatalf("kubectl nginx %s: %v %s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
	conf := func(text string) string {
		return fmt.Sprintf(`events {}\nhttp { server { listen 8080; return 200 %s; } }\n`, text)
	}
	mustKubectl(t, fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: site, namespace: %s}\n"+
		"spec: {revisionHistoryLimit: 2, config: {inline: \"%s\"}}\n", ns, conf("v1")), "create", "-f", "-")
	for _, text := range []string{"v2", "v3", "v4"} {
		mustKubectl(t, "", "patch", "ngx", "site", "-n", ns, "--type=merge", "-p", fmt.Sprintf(`{"spec":{"config":{"inline":"%s"}}}`, conf(text)))
	}
	// Three changes after the first content, two kept before the newest.
	if got := strings.Fields(mustKubectl(t, "", "get", "ngxrev", "-n", ns, "-l", "operator.example.com/nginxoperator=site", "-o", "name")); strings.Join(got, " ") !=
		"nginxoperatorrevision.operator.example.com/site-2 nginxoperatorrevision.operator.example.com/site-3 nginxoperatorrevision.operator.example.com/site-4" {
		t.Errorf("revisions after three changes with a limit of 2: %v, want site-2, site-3, site-4", got)
	}
	history := mustPlugin("history", "site", "-n", ns)
	lines := strings.Split(strings.TrimSpace(history), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "2 ") || !strings.HasPrefix(lines[3], "4* ") || !strings.Contains(lines[3], "Updated") {
		t.Errorf("kubectl nginx history:\n%s\nwant revisions 2, 3 and 4, the newest marked", history)
	}
	t.Logf("kubectl nginx history:\n%s", history)

	diff := mustPlugin("diff", "site", "2", "-n", ns)
	if !strings.Contains(diff, "--- site-2") || !strings.Contains(diff, "-http { server { listen 8080; return 200 v2; } }") || !strings.Contains(diff, "+http { server { listen 8080; return 200 v4; } }") {
		t.Errorf("kubectl nginx diff site 2:\n%s", diff)
	}

	if out := mustPlugin("rollback", "site", "--to-revision=2", "-n", ns); !strings.Contains(out, "rolled back to revision 2: now revision 5") {
		t.Errorf("kubectl nginx rollback: %q", out)
	}
	if got := get(t, "get", "ngx", "site", "-n", ns, "-o", "jsonpath={.status.revision}"); got != "5" {
		t.Errorf("status.revision after the rollback: %s, want 5", got)
	}
	if got := get(t, "get", "ngx", "site", "-n", ns, "-o", "jsonpath={.spec.config.inline}"); !strings.Contains(got, "return 200 v2;") {
		t.Errorf("spec.config.inline after the rollback to 2: %q", got)
	}
	if _, errOut, err := plugin("rollback", "site", "--to-revision=1", "-n", ns); err == nil || !strings.Contains(errOut, "has no revision 1") {
		t.Errorf("rollback to a trimmed revision: %v %s, want a refusal naming it", err, errOut)
	}
	var list v1alpha2.NginxOperatorRevisionList
	if err := json.Unmarshal([]byte(mustPlugin("history", "site", "-n", ns, "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 || list.Items[2].Reason != v1alpha2.RevisionRolledBack || list.Items[2].RolledBackTo != 2 {
		t.Errorf("kubectl nginx history -o json: %+v", list.Items)
	}

	// A reader of NginxOperators and their revisions who may not read ConfigMaps.
	const reader = "e2e-revision-reader"
	mustKubectl(t, "", "create", "configmap", "private-conf", "-n", ns, "--from-literal=nginx.conf=events {} http { server { listen 8080; return 200 hunter2; } }")
	mustKubectl(t, fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: private, namespace: %s}\n"+
		"spec: {config: {configMapKeyRef: {name: private-conf, key: nginx.conf}}}\n", ns), "create", "-f", "-")
	mustKubectl(t, "", "create", "role", "revision-reader", "-n", ns, "--verb=get,list,watch",
		"--resource=nginxoperators.operator.example.com,nginxoperatorrevisions.operator.example.com,nginxoperators.operator.example.com/rendered")
	mustKubectl(t, "", "create", "rolebinding", "revision-reader", "-n", ns, "--role=revision-reader", "--user="+reader)
	framework.WaitFor(t, 3*time.Minute, reader+" allowed to list revisions", func() bool {
		_, _, err := kubectl(t, "", "auth", "can-i", "list", "nginxoperatorrevisions.operator.example.com", "-n", ns, "--as", reader)
		return err == nil
	})
	if _, _, err := kubectl(t, "", "auth", "can-i", "get", "configmaps", "-n", ns, "--as", reader); err == nil {
		t.Fatalf("%s may read ConfigMaps; the check below would prove nothing", reader)
	}
	revisions := mustPlugin("history", "private", "-n", ns, "-o", "yaml", "--as", reader)
	if strings.Contains(revisions, "hunter2") || !strings.Contains(revisions, "private-conf") {
		t.Errorf("revisions as a reader without ConfigMap access:\n%s\nwant the ConfigMap's name and none of its data", revisions)
	}
	if out, _, err := plugin("diff", "private", "1", "-n", ns, "--as", reader); err != nil || strings.Contains(out, "hunter2") {
		t.Errorf("kubectl nginx diff as the reader: %v %q", err, out)
	}

	// The rendered view: what the pods load, once the controller wrote the Deployment.
	// The admin sees the ConfigMap's data; the reader its name and why not its data.
	var rendered string
	framework.WaitFor(t, 3*time.Minute, "the rendered view of private to show its Deployment's files", func() bool {
		out, _, err := plugin("rendered", "private", "-n", ns)
		rendered = out
		return err == nil && strings.Contains(out, "# Deployment private")
	})
	if !strings.Contains(rendered, "return 200 hunter2;") || !strings.Contains(rendered, "ConfigMap private-conf") {
		t.Errorf("kubectl nginx rendered private as the admin:\n%s\nwant the ConfigMap's nginx.conf", rendered)
	}
	asReader := mustPlugin("rendered", "private", "-n", ns, "--as", reader)
	if strings.Contains(asReader, "hunter2") || !strings.Contains(asReader, `may not get ConfigMap private-conf`) {
		t.Errorf("kubectl nginx rendered private as %s:\n%s\nwant the ConfigMap named and its data withheld", reader, asReader)
	}
	t.Logf("kubectl nginx rendered private as %s:\n%s", reader, asReader)
	site := mustPlugin("rendered", "site", "-n", ns, "--as", reader)
	if !strings.Contains(site, "return 200 v2;") {
		t.Errorf("the inline configuration, the spec's own, as %s:\n%s", reader, site)
	}

	// New data in the ConfigMap is a revision too, once the controller has read it.
	mustKubectl(t, "", "patch", "configmap", "private-conf", "-n", ns, "--type=merge", "-p",
		`{"data":{"nginx.conf":"events {} http { server { listen 8080; return 200 changed; } }"}}`)
	took := framework.WaitFor(t, 3*time.Minute, "the ConfigMap's new data to be revision 2 of private", func() bool {
		return get(t, "get", "ngxrev", "private-2", "-n", ns, "-o", "jsonpath={.reason} {.changed[0]}", "--ignore-not-found") == "ConfigMapChanged ConfigMap private-conf"
	})
	framework.Measure(t, "revisions").Duration("configmap-change-recorded", took, "a ConfigMap's new data recorded as a revision after the edit")
	t.Logf("a ConfigMap edit was revision 2 %s later", framework.Describe(took))
	historyLines := strings.Split(strings.TrimSpace(mustPlugin("history", "private", "-n", ns)), "\n")
	if newest := strings.Fields(historyLines[len(historyLines)-1]); len(newest) < 5 || strings.Join(newest[:5], " ") != "2* ConfigMapChanged ConfigMap private-conf <unknown>" {
		t.Errorf("kubectl nginx history private:\n%s", strings.Join(historyLines, "\n"))
	}

	// A staged reload, promoted and aborted by hand. Two pods: one is the canary. kwok's
	// pods have no sidecar to compare, so the stage waits for the canary to load it
	// (for up to two minutes) until a decision comes.
	mustKubectl(t, fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: staged, namespace: %s}\n"+
		"spec: {replicas: 2, config: {inline: \"%s\"}}\n", ns, conf("v1")), "create", "-f", "-")
	if _, errOut, err := plugin("promote", "staged", "-n", ns); err == nil || !strings.Contains(errOut, "has no staged configuration being compared") {
		t.Errorf("kubectl nginx promote with nothing staged: %v %s", err, errOut)
	}
	configMap := func() string {
		return get(t, "get", "configmap", "staged-nginx-conf", "-n", ns, "-o", `jsonpath={.data.nginx\.conf}|{.data.candidate\.conf}`)
	}
	framework.WaitFor(t, 3*time.Minute, "two pods and the ConfigMap of v1", func() bool {
		return strings.Count(get(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance=staged", "-o", "name"), "pod/") == 2 &&
			strings.Count(configMap(), "v1;") == 2
	})
	for _, step := range []struct{ text, verb, phase string }{{"v2", "abort", "Failed"}, {"v3", "promote", "Promoted"}} {
		mustKubectl(t, "", "patch", "ngx", "staged", "-n", ns, "--type=merge", "-p", fmt.Sprintf(`{"spec":{"config":{"inline":"%s"}}}`, conf(step.text)))
		framework.WaitFor(t, time.Minute, step.text+" staged on one pod", func() bool {
			return strings.Count(get(t, "get", "ngx", "staged", "-n", ns, "-o", "jsonpath={.status.canary.phase} {.status.canary.pods[*]}"), " ") == 1 &&
				strings.HasPrefix(get(t, "get", "ngx", "staged", "-n", ns, "-o", "jsonpath={.status.canary.phase}"), "Analyzing") &&
				strings.Contains(configMap(), step.text+";")
		})
		out := mustPlugin(step.verb, "staged", "-n", ns)
		framework.WaitFor(t, time.Minute, step.text+" "+step.phase, func() bool {
			return get(t, "get", "ngx", "staged", "-n", ns, "-o", "jsonpath={.status.canary.phase}") == step.phase
		})
		// Aborted, both files are the stable v1 again; promoted, both are v3.
		want := map[string]string{"abort": "v1;", "promote": "v3;"}[step.verb]
		framework.WaitFor(t, time.Minute, "the ConfigMap after "+step.verb, func() bool { return strings.Count(configMap(), want) == 2 })
		t.Logf("kubectl nginx %s staged: %s; status.canary %s", step.verb, strings.TrimSpace(out),
			get(t, "get", "ngx", "staged", "-n", ns, "-o", "jsonpath={.status.canary}"))
	}
}
