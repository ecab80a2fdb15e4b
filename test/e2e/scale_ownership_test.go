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
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestScaleOwnership walks the sequence of kubernetes issue 82046 with kubectl through
// the aggregation layer: apply --server-side, scale, apply the same file again. The
// re-apply must fail with a conflict on spec.replicas, as it does for a Deployment,
// instead of silently undoing the scale; --force-conflicts takes ownership back.
func TestScaleOwnership(t *testing.T) {
	cases := []struct {
		version, resource, name, manifest string
	}{
		{"v1alpha2", "ngx", "scale-owned-v1alpha2", `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata:
  name: scale-owned-v1alpha2
  namespace: default
spec:
  replicas: 2
`},
		// Applied in v1alpha1, scaled through the preferred version kubectl picks for
		// /scale: ownership must hold across versions.
		{"v1alpha1", "ngx", "scale-owned-v1alpha1", `apiVersion: operator.example.com/v1alpha1
kind: NginxOperator
metadata:
  name: scale-owned-v1alpha1
  namespace: default
spec:
  replicas: 2
  port: 8080
`},
		// The reference behaviour, from kube-apiserver itself.
		{"Deployment", "deployment", "scale-owned-deployment", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: scale-owned-deployment
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: scale-owned-deployment}
  template:
    metadata:
      labels: {app: scale-owned-deployment}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27.4
`},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			name := tc.name
			t.Cleanup(func() { kubectl(t, "", "delete", tc.resource, name, "--ignore-not-found", "--wait=false") })

			mustKubectl(t, tc.manifest, "apply", "--server-side", "-f", "-")
			mustKubectl(t, "", "scale", tc.resource, name, "--replicas=4")
			if got := mustKubectl(t, "", "get", tc.resource, name, "-o", "jsonpath={.spec.replicas}"); got != "4" {
				t.Fatalf("replicas after kubectl scale = %q, want 4", got)
			}
			if owners := replicasOwners(t, tc.resource, name); strings.Join(owners, ",") != "Update/scale" {
				t.Errorf("after kubectl scale spec.replicas is owned by %v, want the scale update only", owners)
			}

			out, errOut, err := kubectl(t, tc.manifest, "apply", "--server-side", "-f", "-")
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() == 0 {
				t.Fatalf("re-apply after scale succeeded (err %v), want a conflict\nstdout: %s", err, out)
			}
			if !strings.Contains(errOut, "conflict") || !strings.Contains(errOut, `subresource "scale"`) || !strings.Contains(errOut, ".spec.replicas") {
				t.Errorf("re-apply error does not name the scale's ownership of .spec.replicas:\n%s", errOut)
			}
			t.Logf("re-apply refused (exit code %d): %s", exitErr.ExitCode(), strings.TrimSpace(errOut))
			if got := mustKubectl(t, "", "get", tc.resource, name, "-o", "jsonpath={.spec.replicas}"); got != "4" {
				t.Errorf("replicas after the refused re-apply = %q, want 4", got)
			}

			mustKubectl(t, tc.manifest, "apply", "--server-side", "--force-conflicts", "-f", "-")
			if got := mustKubectl(t, "", "get", tc.resource, name, "-o", "jsonpath={.spec.replicas}"); got != "2" {
				t.Errorf("replicas after --force-conflicts = %q, want 2", got)
			}
			if owners := replicasOwners(t, tc.resource, name); strings.Join(owners, ",") != "Apply/" {
				t.Errorf("after --force-conflicts spec.replicas is owned by %v, want the apply only", owners)
			}
		})
	}
}

// replicasOwners lists "operation/subresource" of the managedFields entries that own
// spec.replicas.
func replicasOwners(t *testing.T, resource, name string) []string {
	t.Helper()
	var obj struct {
		Metadata struct {
			ManagedFields []struct {
				Operation   string                     `json:"operation"`
				Subresource string                     `json:"subresource"`
				FieldsV1    map[string]json.RawMessage `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	out := mustKubectl(t, "", "get", resource, name, "-o", "json", "--show-managed-fields")
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, e := range obj.Metadata.ManagedFields {
		var spec map[string]json.RawMessage
		if raw, ok := e.FieldsV1["f:spec"]; ok && json.Unmarshal(raw, &spec) == nil {
			if _, ok := spec["f:replicas"]; ok {
				owners = append(owners, e.Operation+"/"+e.Subresource)
			}
		}
	}
	return owners
}
