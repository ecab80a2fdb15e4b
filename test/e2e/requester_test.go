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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestWritingGrantsNothingTheWriterLacks: what a spec makes the controller do with its own
// identity is authorized as the writer (pkg/admission/requester). For each rule, a writer
// who may only write NginxOperators is refused with 403 naming the field and the missing
// permission, also on a server-side dry run; with exactly that permission the same object
// is accepted; and once the permission is gone again, writes that add nothing (a label,
// /scale) and the controller's status writes go on.
func TestWritingGrantsNothingTheWriterLacks(t *testing.T) {
	t.Parallel()
	const ns, writer = "e2e-requester", "tenant-writer"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, "", "create", "role", "ngx-writer", "-n", ns, "--verb=get,list,watch,create,update,patch",
		"--resource=nginxoperators.operator.example.com,nginxoperators.operator.example.com/scale")
	mustKubectl(t, "", "create", "rolebinding", "ngx-writer", "-n", ns, "--role=ngx-writer", "--user="+writer)

	cases := []struct {
		rule, spec, path, refused string
		grant                     []string // kubectl create role arguments: exactly the permission
	}{
		{"Secret", "tls: [{secretName: db-creds}]", "spec.tls[0].secretName", `get secrets "db-creds"`,
			[]string{"--verb=get", "--resource=secrets", "--resource-name=db-creds"}},
		{"ConfigMap", "files: [{configMapName: site, mountPath: /usr/share/nginx/html}]", "spec.files[0].configMapName", `get configmaps "site"`,
			[]string{"--verb=get", "--resource=configmaps", "--resource-name=site"}},
		{"ServiceAccount", "pod: {serviceAccountName: deployer}", "spec.pod.serviceAccountName", `create serviceaccounts/token "deployer"`,
			[]string{"--verb=create", "--resource=serviceaccounts/token", "--resource-name=deployer"}},
		{"beyond restricted", "securityContext: {capabilities: {add: [NET_ADMIN]}}", "spec.securityContext.capabilities.add[0]", "create pods",
			[]string{"--verb=create", "--resource=pods"}},
		{"NodePort", "service: {type: NodePort}", "spec.service.type", "create services",
			[]string{"--verb=create", "--resource=services"}},
	}
	// The cases side by side: each waits out our apiserver's cache of its own denial, and
	// none asks for what another grants.
	for i, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("asks-%d", i)
			manifest := fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: %s, namespace: %s}\nspec: {%s}\n", name, ns, tc.spec)
			asWriter := func(args ...string) (string, string, error) {
				return kubectl(t, manifest, append(args, "-n", ns, "--as", writer)...)
			}
			for _, dryRun := range []string{"--dry-run=server", "--dry-run=none"} {
				_, errOut, err := asWriter("create", "-f", "-", dryRun)
				if err == nil || !strings.Contains(errOut, "Forbidden") || !strings.Contains(errOut, tc.path) || !strings.Contains(errOut, tc.refused) {
					t.Fatalf("create %s without %s: %v %s, want 403 naming %s and the permission", dryRun, tc.refused, err, errOut, tc.path)
				}
			}

			role := "grant-" + name
			mustKubectl(t, "", append([]string{"create", "role", role, "-n", ns}, tc.grant...)...)
			mustKubectl(t, "", "create", "rolebinding", role, "-n", ns, "--role="+role, "--user="+writer)
			// Our apiserver caches a denial for up to 10 s (--authorization-webhook-cache-unauthorized-ttl).
			took := framework.WaitFor(t, 3*time.Minute, "the create to be accepted with "+tc.refused, func() bool {
				_, _, err := asWriter("create", "-f", "-")
				return err == nil
			})
			t.Logf("accepted %s after the Role granting %s", framework.Describe(took), tc.refused)

			mustKubectl(t, "", "delete", "rolebinding", role, "-n", ns)
			mustKubectl(t, "", "delete", "role", role, "-n", ns)
			// Without the permission, writes that add nothing still pass: an unrelated
			// edit, /scale, and the controller's status (its observedGeneration follows).
			if _, errOut, err := asWriter("label", "ngx", name, "team=a"); err != nil {
				t.Errorf("a label after the permission was revoked: %v %s", err, errOut)
			}
			if _, errOut, err := asWriter("scale", "ngx", name, "--replicas=2"); err != nil {
				t.Errorf("kubectl scale after the permission was revoked: %v %s", err, errOut)
			}
			generation := get(t, "get", "ngx", name, "-n", ns, "-o", "jsonpath={.metadata.generation}")
			kc.WaitForOutput(t, 3*time.Minute, generation, "get", "ngx", name, "-n", ns, "-o", "jsonpath={.status.observedGeneration}")
		})
	}

	// What grants nothing beyond the pod's own resources needs no permission: scratch
	// volumes (counted in the container's requests, judged by the namespace's quotas) and
	// switching nginx's metrics sidecar, on create and on update.
	// Reload shares the pod's process namespace between nginx and our sidecar, which runs as
	// nginx's user (one the writer may already name): no power beyond the pod's own.
	t.Run("scratch, metrics and contentUpdate need no permission", func(t *testing.T) {
		manifest := func(enabled bool, update string) string {
			return fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: plain-powers, namespace: %s}\n"+
				"spec: {metrics: {enabled: %t}, contentUpdate: %s, securityContext: {runAsUser: 1000}, config: {inline: \"events {}\"},"+
				" scratch: [{name: cache, mountPath: /var/cache/nginx/proxy, medium: Memory, sizeLimit: 64Mi}]}\n", ns, enabled, update)
		}
		for _, step := range []struct {
			enabled bool
			update  string
		}{{false, "Rollout"}, {true, "Reload"}, {true, "Rollout"}} {
			if _, errOut, err := kubectl(t, manifest(step.enabled, step.update), "apply", "-f", "-", "-n", ns, "--as", writer); err != nil {
				t.Fatalf("a writer with only NginxOperator rights applying scratch, metrics.enabled=%t and contentUpdate %s: %v %s", step.enabled, step.update, err, errOut)
			}
		}
	})
}
