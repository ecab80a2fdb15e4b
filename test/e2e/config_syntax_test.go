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
	"encoding/json"
	"strings"
	"testing"
)

// brokenConf lacks the "}" of its http block, opened on line 3.
const brokenConf = `pid /tmp/nginx.pid;
events {}
http {
  server {
    listen 8080;
    location = /healthz { return 200 "ok\n"; }
  }
`

// indentBlock indents every line of s for a YAML block scalar.
func indentBlock(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix)
}

func syntaxManifestV1alpha2(name, conf string) string {
	return `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: ` + name + `, namespace: default}
spec:
  config:
    inline: |
` + indentBlock(conf, "      ") + "\n"
}

// syntaxManifestV1alpha1 carries the configuration as v1alpha1 does: in the annotation
// holding the fields v1alpha1 cannot express.
func syntaxManifestV1alpha1(t *testing.T, name, conf string) string {
	t.Helper()
	preserved, err := json.Marshal(map[string]any{"spec": map[string]any{"config": map[string]any{"inline": conf}}})
	if err != nil {
		t.Fatal(err)
	}
	annotation, err := json.Marshal(string(preserved))
	if err != nil {
		t.Fatal(err)
	}
	return `apiVersion: operator.example.com/v1alpha1
kind: NginxOperator
metadata:
  name: ` + name + `
  namespace: default
  annotations: {operator.example.com/v1alpha2-fields: ` + string(annotation) + `}
spec: {port: 8080, replicas: 1}
`
}

// refusedForSyntax checks that kubectl failed with a 422 naming spec.config.inline and
// the line, and that the error does not echo the configuration.
func refusedForSyntax(t *testing.T, what, errOut string, err error, line string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	for _, want := range []string{"422 Unprocessable Entity", "is invalid", "spec.config.inline", line, "unbalanced braces"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("%s: the error does not say %q: %s", what, want, lastLines(errOut, 5))
		}
	}
	if strings.Contains(errOut, "healthz") {
		t.Errorf("%s: the error echoes the configuration: %s", what, lastLines(errOut, 5))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestConfigSyntaxRefusedAtAdmission: an inline nginx.conf with an unbalanced brace is
// refused with 422 naming spec.config.inline and the line, through v1alpha2 and v1alpha1,
// on create, on a server-side dry run and on an update that changes it.
func TestConfigSyntaxRefusedAtAdmission(t *testing.T) {
	t.Parallel()
	const name = "config-syntax"
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", name, "--ignore-not-found", "--wait=false") })
	const line = `line 3: the "{" of "http" is never closed`

	_, errOut, err := kubectl(t, syntaxManifestV1alpha2(name, brokenConf), "apply", "-v=6", "-f", "-")
	refusedForSyntax(t, "v1alpha2 apply", errOut, err, line)
	_, errOut, err = kubectl(t, syntaxManifestV1alpha1(t, name, brokenConf), "apply", "-v=6", "-f", "-")
	refusedForSyntax(t, "v1alpha1 apply", errOut, err, line)
	_, errOut, err = kubectl(t, syntaxManifestV1alpha2(name, brokenConf), "apply", "--server-side", "--dry-run=server", "-v=6", "-f", "-")
	refusedForSyntax(t, "server-side apply, dry run", errOut, err, line)
	if out, _, err := kubectl(t, "", "get", "ngx", name, "--ignore-not-found", "-o", "name"); err != nil || out != "" {
		t.Fatalf("a refused configuration was stored: %q %v", out, err)
	}

	// The same file with its "}" passes, and an update breaking it is refused.
	fixed := brokenConf + "}\n"
	mustKubectl(t, syntaxManifestV1alpha2(name, fixed), "apply", "--dry-run=server", "-f", "-")
	mustKubectl(t, syntaxManifestV1alpha2(name, fixed), "apply", "-f", "-")
	_, errOut, err = kubectl(t, syntaxManifestV1alpha2(name, brokenConf), "apply", "-v=6", "-f", "-")
	refusedForSyntax(t, "v1alpha2 update", errOut, err, line)
	_, errOut, err = kubectl(t, syntaxManifestV1alpha1(t, name, brokenConf), "apply", "-v=6", "-f", "-")
	refusedForSyntax(t, "v1alpha1 update", errOut, err, line)
	if got := mustKubectl(t, "", "get", "ngx", name, "-o", "jsonpath={.spec.config.inline}"); got != fixed {
		t.Errorf("the stored configuration changed: %q", got)
	}
}
