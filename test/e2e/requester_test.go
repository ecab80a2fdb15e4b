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
		// The namespace's default ServiceAccount's token is a token all the same.
		{"default ServiceAccount", "pod: {serviceAccountName: default}", "spec.pod.serviceAccountName", `create serviceaccounts/token "default"`,
			[]string{"--verb=create", "--resource=serviceaccounts/token", "--resource-name=default"}},
		// Labels make the pods endpoints of another team's Service; annotations steer the
		// kubelet (AppArmor); placement reaches tainted nodes and other namespaces' pods.
		{"pod labels", "pod: {labels: {app: payments}}", "spec.pod.labels", "create pods",
			[]string{"--verb=create", "--resource=pods"}},
		{"AppArmor annotation", "pod: {annotations: {container.apparmor.security.beta.kubernetes.io/nginx: unconfined}}", "spec.pod.annotations", "create pods",
			[]string{"--verb=create", "--resource=pods"}},
		{"tolerations", "pod: {tolerations: [{operator: Exists}]}", "spec.pod.tolerations", "create pods",
			[]string{"--verb=create", "--resource=pods"}},
		{"priority class", "pod: {priorityClassName: system-cluster-critical}", "spec.pod.priorityClassName", "create pods",
			[]string{"--verb=create", "--resource=pods"}},
		{"node affinity by name", "pod: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [control-plane]}]}]}}}}",
			"spec.pod.affinity", "create pods", []string{"--verb=create", "--resource=pods"}},
		{"pod affinity across namespaces", "pod: {affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, namespaceSelector: {}, labelSelector: {matchLabels: {app: payments}}}]}}}",
			"spec.pod.affinity", "create pods", []string{"--verb=create", "--resource=pods"}},
		{"PodDisruptionBudget", "podDisruptionBudget: {maxUnavailable: 1}", "spec.podDisruptionBudget", "create poddisruptionbudgets.policy",
			[]string{"--verb=create", "--resource=poddisruptionbudgets.policy"}},
	}
	// The cases side by side: each waits out our apiserver's cache of its own denial, and
	// none asks for what another grants.
	// Each case has a writer of its own: a Role granted in one must not let another's
	// refusal through.
	writerOf := func(t *testing.T, name string) string {
		user := writer + "-" + name
		mustKubectl(t, "", "create", "rolebinding", "ngx-writer-"+name, "-n", ns, "--role=ngx-writer", "--user="+user)
		// Asked of kube-apiserver, so that our apiserver caches no denial from before RBAC saw the binding.
		framework.WaitFor(t, 3*time.Minute, user+" allowed to create NginxOperators", func() bool {
			_, _, err := kubectl(t, "", "auth", "can-i", "create", "nginxoperators.operator.example.com", "-n", ns, "--as", user)
			return err == nil
		})
		return user
	}
	for i, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("asks-%d", i)
			writer := writerOf(t, name)
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
	// nginx's user (one the writer may already name): no power beyond the pod's own. The
	// staged reload (spec.canary) only paces a configuration the writer may set.
	t.Run("scratch, metrics, contentUpdate and canary need no permission", func(t *testing.T) {
		manifest := func(enabled bool, update string) string {
			return fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: plain-powers, namespace: %s}\n"+
				"spec: {metrics: {enabled: %t}, contentUpdate: %s, securityContext: {runAsUser: 1000}, config: {inline: \"events {}\"},"+
				" canary: {pods: 1, analysisSeconds: 10, minRequests: 5},"+
				" scratch: [{name: cache, mountPath: /var/cache/nginx/proxy, medium: Memory, sizeLimit: 64Mi}]}\n", ns, enabled, update)
		}
		for _, step := range []struct {
			enabled bool
			update  string
		}{{false, "Rollout"}, {true, "Reload"}, {true, "Rollout"}} {
			if _, errOut, err := kubectl(t, manifest(step.enabled, step.update), "apply", "-f", "-", "-n", ns, "--as", writer); err != nil {
				t.Fatalf("a writer with only NginxOperator rights applying scratch, canary, metrics.enabled=%t and contentUpdate %s: %v %s", step.enabled, step.update, err, errOut)
			}
		}
	})

	// An admin's object mounts a Secret and runs as a ServiceAccount. The writer may update
	// NginxOperators but not read the Secret: a new image, or the Secret's key in the
	// environment, would hand both to the writer's code, so the whole result is judged.
	// Writes that cannot change the pods still pass, and the admin's own update does.
	t.Run("an update inherits no other writer's permissions", func(t *testing.T) {
		t.Parallel()
		writer := writerOf(t, "inherit")
		mustKubectl(t, fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: admins, namespace: %s}\n"+
			"spec: {tls: [{secretName: web-tls}], pod: {serviceAccountName: deployer}}\n", ns), "create", "-f", "-")
		asWriter := func(args ...string) (string, string, error) {
			return kubectl(t, "", append(args, "-n", ns, "--as", writer)...)
		}
		for _, patch := range []string{`{"spec":{"image":"registry.example.com/writer:1"}}`,
			`{"spec":{"env":[{"name":"K","valueFrom":{"secretKeyRef":{"name":"web-tls","key":"tls.key"}}}]}}`} {
			_, errOut, err := asWriter("patch", "ngx", "admins", "--type=merge", "-p", patch)
			if err == nil || !strings.Contains(errOut, "Forbidden") || !strings.Contains(errOut, `spec.tls[0].secretName (Secret "web-tls")`) ||
				!strings.Contains(errOut, `create serviceaccounts/token "deployer"`) {
				t.Errorf("the writer's patch %s of the admin's object: %v %s; want 403 naming the stored Secret and ServiceAccount", patch, err, errOut)
			}
		}
		if got := get(t, "get", "ngx", "admins", "-n", ns, "-o", "jsonpath={.spec.image}|{.spec.env}"); strings.Contains(got, "writer") || strings.Contains(got, "K") {
			t.Errorf("a refused patch changed the object: %s", got)
		}
		for _, args := range [][]string{{"label", "ngx", "admins", "team=b"}, {"annotate", "ngx", "admins", "note=x"}, {"scale", "ngx", "admins", "--replicas=2"}} {
			if _, errOut, err := asWriter(args...); err != nil {
				t.Errorf("the writer's %v, which cannot change the pods: %v %s", args, err, errOut)
			}
		}
		mustKubectl(t, "", "patch", "ngx", "admins", "-n", ns, "--type=merge", "-p", `{"spec":{"image":"registry.example.com/admin:2"}}`)
	})

	// A rollback is a write like any other: going back to a revision that mounted the
	// admin's Secret asks the writer for that Secret, whoever wrote the revision.
	t.Run("a rollback inherits no other writer's permissions", func(t *testing.T) {
		t.Parallel()
		writer := writerOf(t, "rollback")
		mustKubectl(t, "", "create", "role", "ngx-rollback", "-n", ns, "--verb=create", "--resource=nginxoperators.operator.example.com/rollback")
		mustKubectl(t, "", "create", "rolebinding", "ngx-rollback", "-n", ns, "--role=ngx-rollback", "--user="+writer)
		mustKubectl(t, fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: rolls, namespace: %s}\n"+
			"spec: {tls: [{secretName: web-tls}]}\n", ns), "create", "-f", "-")
		mustKubectl(t, "", "patch", "ngx", "rolls", "-n", ns, "--type=merge", "-p", `{"spec":{"tls":null}}`)
		path := "/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators/rolls/rollback"
		body := `{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperatorRollback","toRevision":1}`
		framework.WaitFor(t, 3*time.Minute, writer+" allowed to create nginxoperators/rollback", func() bool {
			_, _, err := kubectl(t, "", "auth", "can-i", "create", "nginxoperators.operator.example.com", "--subresource=rollback", "-n", ns, "--as", writer)
			return err == nil
		})
		_, errOut, err := kubectl(t, body, "create", "--raw", path, "-f", "-", "--as", writer)
		if err == nil || !strings.Contains(errOut, "Forbidden") || !strings.Contains(errOut, `spec.tls[0].secretName (Secret "web-tls")`) {
			t.Errorf("the writer's rollback to the admin's revision with web-tls: %v %s; want 403 naming the Secret", err, errOut)
		}
		if got := get(t, "get", "ngx", "rolls", "-n", ns, "-o", "jsonpath={.status.revision}|{.spec.tls}"); got != "2|" {
			t.Errorf("a refused rollback changed the object: %s, want revision 2 without tls", got)
		}
		mustKubectl(t, body, "create", "--raw", path, "-f", "-")
		if got := get(t, "get", "ngx", "rolls", "-n", ns, "-o", "jsonpath={.status.revision}|{.spec.tls[0].secretName}"); got != "3|web-tls" {
			t.Errorf("the admin's rollback: %s, want revision 3 with web-tls", got)
		}
	})

	// What a writer leaves out runs restricted, whatever the image, v1alpha1 objects
	// included: the Deployment's pods are non-root, RuntimeDefault, no escalation, every
	// capability but NET_BIND_SERVICE dropped, and mount no token.
	t.Run("restricted by default whatever the image", func(t *testing.T) {
		t.Parallel()
		writer := writerOf(t, "restricted")
		manifest := fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: stock, namespace: %[1]s}\nspec: {image: \"nginx:1.27.4\"}\n---\n"+
			"apiVersion: operator.example.com/v1alpha1\nkind: NginxOperator\nmetadata: {name: legacy, namespace: %[1]s}\nspec: {port: 80}\n", ns)
		if _, errOut, err := kubectl(t, manifest, "create", "-f", "-", "-n", ns, "--as", writer); err != nil {
			t.Fatalf("a writer with NginxOperator rights creating a stock image and a v1alpha1 object: %v %s", err, errOut)
		}
		const template = `{.spec.template.spec.securityContext.runAsNonRoot} {.spec.template.spec.securityContext.seccompProfile.type} ` +
			`{.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation} {.spec.template.spec.containers[0].securityContext.capabilities} ` +
			`{.spec.template.spec.automountServiceAccountToken}`
		// The default image's spec says drop ALL itself (v1alpha2 defaulting); the stock
		// image's leaves it to the controller, which also adds NET_BIND_SERVICE.
		for name, capabilities := range map[string]string{"stock": `{"add":["NET_BIND_SERVICE"],"drop":["ALL"]}`, "legacy": `{"drop":["ALL"]}`} {
			kc.WaitForOutput(t, 3*time.Minute, "true RuntimeDefault false "+capabilities+" false", "get", "deployment", name, "-n", ns, "-o", "jsonpath="+template)
		}
		if got := get(t, "get", "deployment", "legacy", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginxinc/nginx-unprivileged:1.27.4" {
			t.Errorf("a v1alpha1 object runs %q, want the unprivileged default image", got)
		}
		// Saying root is beyond the restricted profile.
		_, errOut, err := kubectl(t, "", "patch", "ngx", "stock", "-n", ns, "--as", writer, "--type=merge", "-p", `{"spec":{"securityContext":{"runAsNonRoot":false}}}`)
		if err == nil || !strings.Contains(errOut, "spec.securityContext.runAsNonRoot") || !strings.Contains(errOut, "create pods") {
			t.Errorf("the writer saying runAsNonRoot false: %v %s; want 403", err, errOut)
		}
		// The controller's own pod annotations are not the writer's to set.
		_, errOut, err = kubectl(t, "", "patch", "ngx", "stock", "-n", ns, "--type=merge", "-p", `{"spec":{"pod":{"annotations":{"operator.example.com/content-sync":"x"}}}}`)
		if err == nil || !strings.Contains(errOut, "spec.pod.annotations[operator.example.com/content-sync]") {
			t.Errorf("a pod annotation under operator.example.com/: %v %s; want 422 naming it", err, errOut)
		}
	})

	// An inline configuration's ConfigMap that someone else made is never mounted: the
	// Deployment is not created, and status says why.
	t.Run("a foreign ConfigMap is not mounted", func(t *testing.T) {
		t.Parallel()
		writer := writerOf(t, "foreign")
		mustKubectl(t, "", "create", "configmap", "foreign-nginx-conf", "-n", ns, "--from-literal=nginx.conf=events {}")
		manifest := fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: foreign, namespace: %s}\n"+
			"spec: {config: {inline: \"events {}\\nhttp { server { listen 8080; } }\\n\"}}\n", ns)
		if _, errOut, err := kubectl(t, manifest, "create", "-f", "-", "-n", ns, "--as", writer); err != nil {
			t.Fatalf("create: %v %s", err, errOut)
		}
		framework.WaitFor(t, 3*time.Minute, "status naming the foreign ConfigMap", func() bool {
			return strings.Contains(get(t, "get", "ngx", "foreign", "-n", ns, "-o", "jsonpath={.status.conditions}"), "foreign-nginx-conf exists and is not controlled")
		})
		if out, _, _ := kubectl(t, "", "get", "deployment", "foreign", "-n", ns, "--ignore-not-found", "-o", "name"); strings.TrimSpace(out) != "" {
			t.Errorf("a Deployment was applied over the foreign ConfigMap: %s", out)
		}
	})

	// Status is read by people who may not read Secrets: it says the same of a spec.tls
	// Secret that does not exist as of one that exists with another type.
	t.Run("status does not tell whether a Secret exists", func(t *testing.T) {
		t.Parallel()
		mustKubectl(t, "", "create", "secret", "generic", "opaque", "-n", ns, "--from-literal=password=x")
		for name, secret := range map[string]string{"tls-missing": "absent", "tls-opaque": "opaque"} {
			mustKubectl(t, fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: %s, namespace: %s}\nspec: {tls: [{secretName: %s}]}\n", name, ns, secret), "create", "-f", "-")
		}
		const condition = `jsonpath={.status.conditions[?(@.type=="OperatorDegraded")].reason}: {.status.conditions[?(@.type=="OperatorDegraded")].message}`
		var missing, opaque string
		framework.WaitFor(t, 3*time.Minute, "both refusals in status", func() bool {
			missing = get(t, "get", "ngx", "tls-missing", "-n", ns, "-o", condition)
			opaque = get(t, "get", "ngx", "tls-opaque", "-n", ns, "-o", condition)
			return strings.Contains(missing, "Secret absent") && strings.Contains(opaque, "Secret opaque")
		})
		if strings.ReplaceAll(missing, "absent", "X") != strings.ReplaceAll(opaque, "opaque", "X") {
			t.Errorf("status tells a missing Secret from an Opaque one:\n  %s\n  %s", missing, opaque)
		}
		t.Logf("both say: %s", opaque)
	})
}
