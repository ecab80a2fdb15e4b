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
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

const webManifest = `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata:
  name: kubectl-web
  namespace: default
spec:
  replicas: 2
  ports:
  - name: http
    containerPort: 8080
  service:
    type: NodePort
    ports:
    - name: http
      port: 80
      nodePort: 30081
`

// TestKubectlVerbs: kubectl is the subject here, so every command runs it, reads too.
func TestKubectlVerbs(t *testing.T) {
	t.Parallel()
	itself := kc
	itself.AlwaysRun = true
	kubectl := func(t *testing.T, stdin string, args ...string) (string, string, error) {
		t.Helper()
		return itself.Run(t, stdin, args...)
	}
	mustKubectl := func(t *testing.T, stdin string, args ...string) string {
		t.Helper()
		return itself.Must(t, stdin, args...)
	}
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "kubectl-web", "kubectl-legacy", "--ignore-not-found") })

	out := mustKubectl(t, webManifest, "create", "-f", "-")
	if !strings.Contains(out, "nginxoperator.operator.example.com/kubectl-web created") {
		t.Errorf("create: %s", out)
	}
	out = mustKubectl(t, "", "get", "ngx", "kubectl-web")
	if header := strings.Fields(strings.Split(out, "\n")[0]); strings.Join(header, " ") != "NAME READY REASON PODS PORTS AGE" {
		t.Errorf("table header = %v", header)
	}
	out = mustKubectl(t, "", "get", "nginxoperators", "kubectl-web", "-o", "wide")
	if !strings.Contains(out, "IMAGE") || !strings.Contains(out, "NodePort(80:30081)") || !strings.Contains(out, "nginxinc/nginx-unprivileged:1.27.4") {
		t.Errorf("-o wide:\n%s", out)
	}
	out = mustKubectl(t, "", "get", "ngx", "kubectl-web", "-o", "yaml", "--show-managed-fields")
	if !strings.Contains(out, "containerPort: 8080") || !strings.Contains(out, "managedFields") {
		t.Errorf("-o yaml:\n%s", out)
	}
	out = mustKubectl(t, "", "describe", "ngx", "kubectl-web")
	if !strings.Contains(out, "Name:         kubectl-web") || !strings.Contains(out, "Container Port:  8080") {
		t.Errorf("describe:\n%s", out)
	}
	for _, version := range []string{"v1alpha1", "v1alpha2"} {
		out = mustKubectl(t, "", "explain", "nginxoperators.spec", "--api-version", "operator.example.com/"+version)
		want := map[string]string{"v1alpha1": "forceRedploy", "v1alpha2": "forceRedeploy"}[version]
		if !strings.Contains(out, want) || !strings.Contains(out, "VERSION:    "+version) {
			t.Errorf("explain %s:\n%s", version, out)
		}
	}

	// Server-side apply: two managers conflict on replicas until one forces.
	mustKubectl(t, strings.Replace(webManifest, "kubectl-web", "kubectl-legacy", 1), "apply", "--server-side", "--field-manager", "alice", "-f", "-")
	_, errOut, err := kubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: kubectl-legacy, namespace: default}\nspec: {replicas: 4}\n",
		"apply", "--server-side", "--field-manager", "bob", "-f", "-")
	if err == nil || !strings.Contains(errOut, "conflict") || !strings.Contains(errOut, ".spec.replicas") {
		t.Errorf("SSA conflict expected: %v %s", err, errOut)
	}
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: kubectl-legacy, namespace: default}\nspec: {replicas: 4}\n",
		"apply", "--server-side", "--field-manager", "bob", "--force-conflicts", "-f", "-")
	if got := mustKubectl(t, "", "get", "ngx", "kubectl-legacy", "-o", "jsonpath={.spec.replicas}"); got != "4" {
		t.Errorf("replicas after forced apply = %q", got)
	}

	mustKubectl(t, "", "patch", "ngx", "kubectl-web", "--type", "merge", "-p", `{"spec":{"image":"nginx:1.26"}}`)
	mustKubectl(t, "", "patch", "ngx", "kubectl-web", "--type", "json", "-p", `[{"op":"replace","path":"/spec/replicas","value":3}]`)
	if got := mustKubectl(t, "", "get", "ngx", "kubectl-web", "-o", "jsonpath={.spec.image} {.spec.replicas}"); got != "nginx:1.26 3" {
		t.Errorf("after patches: %q", got)
	}
	_, errOut, err = kubectl(t, "", "patch", "ngx", "kubectl-web", "--type", "merge", "-p", `{"spec":{"replicas":-2}}`)
	if err == nil || !strings.Contains(errOut, "spec.replicas") {
		t.Errorf("invalid patch: %v %s", err, errOut)
	}

	// Edit-equivalent: get, change, replace (with the resourceVersion it read). The
	// controller writes status meanwhile, so retry on conflict as kubectl edit users do.
	var current string
	for attempt := 0; ; attempt++ {
		current = mustKubectl(t, "", "get", "ngx", "kubectl-web", "-o", "yaml")
		_, errOut, err := kubectl(t, strings.Replace(current, "containerPort: 8080", "containerPort: 9090", 1), "replace", "-f", "-")
		if err == nil {
			break
		}
		if attempt == 4 || !strings.Contains(errOut, "the object has been modified") {
			t.Fatalf("replace: %v %s", err, errOut)
		}
	}
	if got := mustKubectl(t, "", "get", "ngx", "kubectl-web", "-o", "jsonpath={.spec.ports[0].containerPort}"); got != "9090" {
		t.Errorf("after replace: %q", got)
	}
	_, errOut, err = kubectl(t, current, "replace", "-f", "-")
	if err == nil || !strings.Contains(errOut, "the object has been modified") {
		t.Errorf("replace with a stale resourceVersion: %v %s", err, errOut)
	}

	mustKubectl(t, "", "scale", "ngx", "kubectl-web", "--replicas", "5")
	if got := mustKubectl(t, "", "get", "ngx", "kubectl-web", "-o", "jsonpath={.spec.replicas}"); got != "5" {
		t.Errorf("after scale: %q", got)
	}

	// wait --for=condition: set a condition through the status subresource once kubectl
	// wait watches (at -v=6 it logs each request when its answer arrives), or has already
	// found it set by the controller.
	waitLog := filepath.Join(t.TempDir(), "kubectl-wait.log")
	waiting, err := framework.StartProcess(waitLog, "/usr/bin/kubectl", "--kubeconfig", adminKubeconfig(), "-v=6",
		"wait", "--for", "condition=Available", "--timeout", "60s", "ngx/kubectl-web")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = waiting.Kill() })
	waitFor(t, 3*time.Minute, "kubectl wait to watch the NginxOperator", func() bool {
		return !waiting.Running() || strings.Contains(waiting.Log(), "watch=true")
	})
	mustKubectl(t, "", "patch", "ngx", "kubectl-web", "--subresource", "status", "--type", "merge", "-p",
		`{"status":{"conditions":[{"type":"Available","status":"True","reason":"OperatorSucceeded","message":"set by the e2e test","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	select {
	case <-waiting.Exited():
	case <-time.After(90 * time.Second):
		t.Fatalf("kubectl wait --for condition=Available did not end:\n%s", waiting.Log())
	}
	if !strings.Contains(waiting.Log(), "condition met") {
		t.Errorf("kubectl wait --for condition=Available did not see it met:\n%s", waiting.Log())
	}

	// get -w prints the change it sees. The controller writes status concurrently, so
	// any MODIFIED event proves nothing: look for the replica count the scale set.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", "--kubeconfig", adminKubeconfig(), "get", "ngx", "kubectl-web", "-w", "--output-watch-events",
		"-o", `jsonpath={.type} {.object.metadata.name} replicas={.object.spec.replicas}{"\n"}`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	seen := make(chan string, 10)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			seen <- scanner.Text()
		}
		close(seen)
	}()
	// The watch starts with the current object; scale once it is established.
	if first := <-seen; first != "ADDED kubectl-web replicas=5" {
		t.Fatalf("get -w started with %q, want the current object with 5 replicas", first)
	}
	mustKubectl(t, "", "scale", "ngx", "kubectl-web", "--replicas", "1")
	var lines []string
	found := false
	for line := range seen {
		lines = append(lines, line)
		if line == "MODIFIED kubectl-web replicas=1" {
			found = true
			break
		}
	}
	if !found {
		t.Errorf("get -w printed %q, want a MODIFIED event with replicas=1", lines)
	}

	out = mustKubectl(t, "", "delete", "ngx", "kubectl-web")
	if !strings.Contains(out, "deleted") {
		t.Errorf("delete: %s", out)
	}
	if _, errOut, err := kubectl(t, "", "get", "ngx", "kubectl-web"); err == nil || !strings.Contains(errOut, "NotFound") {
		t.Errorf("after delete: %v %s", err, errOut)
	}
}
