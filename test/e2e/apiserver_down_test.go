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
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestOurAPIServerDownBehindTheAggregator stops our apiserver and checks what users of
// aggregated apiservers run into: kube-apiserver stays healthy and serves every other
// group, the APIServices say why they are unavailable, namespace deletion copes, and
// everything settles by itself once our apiserver is back.
func TestOurAPIServerDownBehindTheAggregator(t *testing.T) {
	const unrelated, ours = "e2e-down-unrelated", "e2e-down-ours"
	t.Cleanup(func() {
		kubectl(t, "", "delete", "namespace", unrelated, ours, "--ignore-not-found", "--wait=false")
	})
	mustKubectl(t, "", "create", "namespace", unrelated)
	mustKubectl(t, "", "create", "configmap", "-n", unrelated, "payload", "--from-literal=k=v")
	mustKubectl(t, "", "create", "namespace", ours)
	for _, name := range []string{"one", "two"} {
		mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: "+name+"}\n", "apply", "-n", ours, "-f", "-")
	}

	// kubectl caches discovery (by default for 6 hours): a user who ran it while we were up
	// keeps our resource in the cache, categories included, while we are down.
	cache := t.TempDir()
	if out := get(t, "--cache-dir", cache, "get", "all", "-A"); !strings.Contains(out, "service/kubernetes") {
		t.Fatalf("kubectl get all -A while our apiserver is up:\n%s", out)
	}
	// The garbage collector's owner and dependent, deleted while we are down.
	mustKubectl(t, "", "create", "configmap", "-n", unrelated, "owner")
	ownerUID := get(t, "get", "configmap", "-n", unrelated, "owner", "-o", "jsonpath={.metadata.uid}")
	mustKubectl(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: %s}]
`, ownerUID), "apply", "-n", unrelated, "-f", "-")

	restart := stopOperatorAPIServer(t)
	stopped := time.Now()
	waitFor(t, 2*time.Minute, "both APIServices Available=False", func() bool {
		out, _, _ := kubectl(t, "", "get", "apiservice", "v1alpha1.operator.example.com", "v1alpha2.operator.example.com",
			"-o", "jsonpath={.items[*].status.conditions[?(@.type=='Available')].status}")
		return out == "False False"
	})
	down := framework.Measure(t, "apiserver-down-behind-the-aggregator")
	down.Duration("apiservices-unavailable", time.Since(stopped), "both APIServices Available=False after our apiserver was stopped")
	t.Logf("APIServices Available=False %s after our apiserver was stopped", time.Since(stopped).Round(100*time.Millisecond))
	for _, name := range []string{"v1alpha1.operator.example.com", "v1alpha2.operator.example.com"} {
		reason := get(t, "get", "apiservice", name, "-o", "jsonpath={.status.conditions[?(@.type=='Available')].reason}")
		message := get(t, "get", "apiservice", name, "-o", "jsonpath={.status.conditions[?(@.type=='Available')].message}")
		t.Logf("APIService %s while down: Available=False reason=%s message=%q", name, reason, message)
		// The aggregator names the failure: the endpoint cannot be reached.
		if reason == "" || !strings.Contains(message, "127.0.0.1") && !strings.Contains(strings.ToLower(message), "fail") {
			t.Errorf("APIService %s: reason %q, message %q do not say what is wrong", name, reason, message)
		}
	}

	// kube-apiserver itself stays healthy and serves everything else.
	admin := adminHTTPClient(t)
	for _, path := range []string{"/readyz", "/livez"} {
		resp, err := admin.Get(kubeURL(path))
		if err != nil {
			t.Fatalf("kube-apiserver %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "ok" {
			t.Errorf("kube-apiserver %s = %d %q while our apiserver is down", path, resp.StatusCode, body)
		}
	}
	for _, args := range [][]string{
		{"get", "--raw", "/apis"},
		{"get", "--raw", "/apis/apps/v1"},
		{"get", "--raw", "/api/v1/namespaces"},
		{"get", "deployments,services,configmaps", "-A"},
	} {
		if _, errOut, err := kubectl(t, "", args...); err != nil {
			t.Errorf("kubectl %s while our apiserver is down: %v %s", strings.Join(args, " "), err, errOut)
		}
	}
	blastRadius(t, cache, unrelated)
	// Our own group answers 503 through the aggregator, not a hang.
	_, errOut, err := kubectl(t, "", "get", "--raw", "/apis/operator.example.com/v1alpha2/nginxoperators")
	if err == nil || !strings.Contains(errOut, "ServiceUnavailable") {
		t.Errorf("our group while down: err=%v stderr=%s; want 503 Service Unavailable", err, errOut)
	}
	t.Logf("our group through the aggregator while down: %s", strings.TrimSpace(errOut))

	// Delete both namespaces while our group cannot be discovered.
	mustKubectl(t, "", "delete", "namespace", unrelated, ours, "--wait=false")
	deleted := time.Now()
	// The namespace controller deletes the content it can discover; whether it may finalize a
	// namespace while one group's discovery fails is kube-controller-manager's decision, so
	// the test waits for the content (the ConfigMap) to go and reports what became of the
	// namespace.
	var unrelatedGone time.Duration
	contentGone := framework.Poll(3*time.Minute, time.Second, func() bool {
		if !namespaceExists(t, unrelated) {
			unrelatedGone = time.Since(deleted)
			return true
		}
		return get(t, "get", "configmap", "-n", unrelated, "payload", "--ignore-not-found", "-o", "name") == ""
	})
	if !contentGone {
		t.Errorf("the unrelated namespace still holds its ConfigMap %s after its deletion", time.Since(deleted).Round(time.Second))
	}
	if unrelatedGone > 0 {
		t.Logf("unrelated namespace (a ConfigMap) deleted %s after the delete, with our apiserver down", unrelatedGone.Round(100*time.Millisecond))
	} else {
		t.Logf("unrelated namespace Terminating %s after the delete, its ConfigMap gone; conditions: %s",
			time.Since(deleted).Round(100*time.Millisecond), namespaceConditions(t, unrelated))
	}

	// Ours cannot be emptied: it waits, saying why.
	if phase := get(t, "get", "namespace", ours, "-o", "jsonpath={.status.phase}"); phase != "Terminating" {
		t.Fatalf("namespace %s holding NginxOperators is %q while our apiserver is down; want Terminating", ours, phase)
	}
	var conditions string
	if !framework.Poll(3*time.Minute, time.Second, func() bool {
		conditions = namespaceConditions(t, ours)
		return strings.Contains(conditions, "NamespaceDeletionDiscoveryFailure=True") || strings.Contains(conditions, "NamespaceDeletionContentFailure=True")
	}) {
		t.Errorf("namespace %s does not report the discovery or content failure: %s", ours, conditions)
	}
	t.Logf("namespace %s while our apiserver is down: %s", ours, conditions)

	// kube-aggregator rechecks a failing APIService with a backoff capped at 30s; here no
	// EndpointSlice changes on the restart (in a cluster the pod turning ready does), so the
	// time to Available depends on where that backoff stands.
	ready := restart()
	var available, oursGone, unrelatedGoneAfter time.Duration
	waitFor(t, 5*time.Minute, "APIServices Available and both namespaces gone", func() bool {
		if available == 0 && apiServicesAvailable(t)() {
			available = time.Since(ready)
		}
		if oursGone == 0 && !namespaceExists(t, ours) {
			oursGone = time.Since(ready)
		}
		if unrelatedGone == 0 && unrelatedGoneAfter == 0 && !namespaceExists(t, unrelated) {
			unrelatedGoneAfter = time.Since(ready)
		}
		return available > 0 && oursGone > 0 && (unrelatedGone > 0 || unrelatedGoneAfter > 0)
	})
	down.Duration("apiservices-available-again", available, "both APIServices Available again after our apiserver's /readyz")
	down.Duration("namespace-deleted-after-return", oursGone, "the namespace holding NginxOperators gone after our apiserver's /readyz")
	t.Logf("after our apiserver's /readyz: APIServices Available in %s, namespace with NginxOperators gone in %s",
		available.Round(100*time.Millisecond), oursGone.Round(100*time.Millisecond))
	if unrelatedGoneAfter > 0 {
		t.Logf("unrelated namespace gone %s after our apiserver's /readyz (%s after its delete)",
			unrelatedGoneAfter.Round(100*time.Millisecond), time.Since(deleted).Round(time.Second))
	}
	// The namespace went away because its NginxOperators were deleted, not lost.
	if out := get(t, "get", "--raw", "/apis/operator.example.com/v1alpha2/namespaces/"+ours+"/nginxoperators"); !strings.Contains(out, `"items":[]`) {
		t.Errorf("NginxOperators survived their namespace: %s", out)
	}
}

// blastRadius measures what a cluster user loses while our apiserver is down: `kubectl get
// all` with the discovery cached while we were up keeps working (NginxOperators are not in
// the "all" category), `kubectl api-resources` lists every other group and reports ours, and
// the garbage collector still deletes a dependent whose owner goes.
func blastRadius(t *testing.T, cache, namespace string) {
	t.Helper()
	out, errOut, err := kubectl(t, "", "--cache-dir", cache, "get", "all", "-A")
	if err != nil || !strings.Contains(out, "service/kubernetes") {
		t.Errorf("kubectl get all -A with discovery cached while we were up, now that we are down: %v\n%s\n%s", err, out, errOut)
	} else {
		t.Logf("kubectl get all -A while our apiserver is down: exit 0, %d lines", strings.Count(out, "\n"))
	}
	out, errOut, err = kubectl(t, "", "--cache-dir", cache, "api-resources")
	if !strings.Contains(out, "deployments") {
		t.Errorf("kubectl api-resources while our apiserver is down lists no deployments: %v\n%s", err, errOut)
	}
	if strings.Contains(out, "nginxoperators") {
		t.Errorf("kubectl api-resources lists nginxoperators while our apiserver is down:\n%s", out)
	}
	framework.Measure(t, "apiserver-down-behind-the-aggregator").Count("api-resources-listed", strings.Count(out, "\n")-1, "resources",
		"resources kubectl api-resources lists while our apiserver is down")
	t.Logf("kubectl api-resources while our apiserver is down: %d resources listed, exit error %v, stderr %q",
		strings.Count(out, "\n")-1, err, strings.TrimSpace(errOut))

	deleted := time.Now()
	mustKubectl(t, "", "delete", "configmap", "-n", namespace, "owner")
	d := framework.WaitFor(t, 2*time.Minute, "the garbage collector to delete the dependent of a deleted owner", func() bool {
		return get(t, "get", "configmap", "-n", namespace, "dependent", "--ignore-not-found", "-o", "name") == ""
	})
	framework.Measure(t, "apiserver-down-behind-the-aggregator").Duration("garbage-collected", d, "the garbage collector deleted a dependent after its owner, with our apiserver down")
	t.Logf("garbage collector deleted the dependent %s after its owner, with our apiserver down %s",
		d.Round(100*time.Millisecond), time.Since(deleted).Round(time.Second))
}

func namespaceExists(t *testing.T, name string) bool {
	_, errOut, err := kubectl(t, "", "get", "namespace", name)
	if err != nil && !strings.Contains(errOut, "NotFound") {
		t.Logf("reading namespace %s: %s", name, errOut)
		return true
	}
	return err == nil
}

// namespaceConditions prints a namespace's conditions as type=status (reason: message).
func namespaceConditions(t *testing.T, name string) string {
	return get(t, "get", "namespace", name, "-o",
		fmt.Sprintf("jsonpath=%s", `{range .status.conditions[*]}{.type}={.status} ({.reason}: {.message}); {end}`))
}
