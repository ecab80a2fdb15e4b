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
	"path/filepath"
	"strings"
	"testing"
)

// TestDeployArtifactsPassServerDryRun checks every manifest of artifacts/deploy against
// the real kube-apiserver's validation, admission and defaulting. The directory is a
// kustomize base, so it is applied with -k (-f would read kustomization.yaml as an object).
func TestDeployArtifactsPassServerDryRun(t *testing.T) {
	t.Parallel()
	out := mustKubectl(t, "", "apply", "--dry-run=server", "-k", filepath.Join(repoRoot, "artifacts", "deploy"))
	for _, kind := range []string{"namespace/", "statefulset.apps/", "deployment.apps/", "apiservice.apiregistration.k8s.io/", "clusterrolebinding.rbac.authorization.k8s.io/"} {
		if !strings.Contains(out, kind) {
			t.Errorf("dry run did not cover %s:\n%s", kind, out)
		}
	}
}
