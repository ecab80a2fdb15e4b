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
	"time"
)

// Deleting a namespace must not hang in Terminating: the namespace controller has to
// discover, list and delete our resources through the aggregation layer.
func TestNamespaceWithNginxOperatorsDeletes(t *testing.T) {
	t.Parallel()
	mustKubectl(t, "", "create", "namespace", "e2e-doomed")
	for _, name := range []string{"one", "two"} {
		mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: "+name+"}\n", "apply", "-n", "e2e-doomed", "-f", "-")
	}
	mustKubectl(t, "", "delete", "namespace", "e2e-doomed", "--wait=false")
	waitFor(t, 3*time.Minute, "namespace e2e-doomed to be gone", func() bool {
		_, _, err := kubectl(t, "", "get", "namespace", "e2e-doomed")
		return err != nil
	})
	if out, _, _ := kubectl(t, "", "get", "--raw", "/apis/operator.example.com/v1alpha2/namespaces/e2e-doomed/nginxoperators"); out != "" && !strings.Contains(out, `"items":[]`) {
		t.Errorf("objects survived their namespace: %s", out)
	}
}
