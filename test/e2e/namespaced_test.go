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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestControllerConfinedToNamespaces runs a second controller, as a ServiceAccount whose
// only rights on NginxOperators and their children are the ClusterRole
// nginx-operator-controller bound by a RoleBinding in one namespace (what
// artifacts/overlays/namespaced installs), with --namespaces naming it. Its caches sync
// with those rights alone, it reconciles what is there and counts nothing elsewhere; the
// same identity without --namespaces is refused its cluster-wide lists. The stack's own
// controller keeps running: both apply the same children with the same field manager.
func TestControllerConfinedToNamespaces(t *testing.T) {
	t.Parallel()
	ns, other := "confined-e2e", "confined-e2e-other"
	for _, n := range []string{ns, other} {
		t.Cleanup(func() { kubectl(t, "", "delete", "namespace", n, "--ignore-not-found", "--wait=false") })
		mustKubectl(t, "", "create", "namespace", n)
	}
	mustKubectl(t, "", "-n", ns, "create", "serviceaccount", "confined-controller")
	mustKubectl(t, "", "-n", ns, "create", "rolebinding", "nginx-operator-controller",
		"--clusterrole=nginx-operator-controller", "--serviceaccount="+ns+":confined-controller")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	flat := mustKubectl(t, "", "config", "view", "--raw", "--minify", "--flatten")
	if err := os.WriteFile(kubeconfig, []byte(flat), 0o600); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(mustKubectl(t, "", "-n", ns, "create", "token", "confined-controller", "--duration=1h"))
	for _, args := range [][]string{
		{"config", "set-credentials", "confined-controller", "--token=" + token},
		{"config", "set-context", "--current", "--user=confined-controller"},
	} {
		if out, err := exec.Command("/usr/bin/kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", args[1], err, out)
		}
	}

	start := func(name string, extra ...string) (*framework.Process, string) {
		metrics, probes := framework.MustFreePort(t), framework.MustFreePort(t)
		args := append([]string{filepath.Join(repoRoot, "bin", "controller"), "--kubeconfig", kubeconfig, "--leader-elect=false",
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics), "--metrics-secure=false",
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes), "--pprof-bind-address=0"}, extra...)
		p, err := framework.StartProcess(filepath.Join(t.TempDir(), name+".log"), args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			p.Stop(os.Interrupt, 10*time.Second)
			if t.Failed() {
				t.Logf("%s log:\n%s", name, p.Log())
			}
		})
		return p, fmt.Sprintf("http://127.0.0.1:%d", metrics)
	}

	// Without --namespaces the same identity cannot list cluster-wide: never ready.
	unconfined, _ := start("unconfined-controller")
	waitFor(t, 3*time.Minute, "the unconfined controller's lists to be forbidden", func() bool {
		return strings.Contains(unconfined.Log(), "forbidden")
	})
	unconfined.Stop(os.Interrupt, 10*time.Second)

	confined, metricsURL := start("confined-controller", "--namespaces="+ns)
	waitFor(t, 3*time.Minute, "the confined controller's metrics", func() bool {
		resp, err := http.Get(metricsURL + "/metrics")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	for _, n := range []string{ns, other} {
		mustKubectl(t, `{"apiVersion": "operator.example.com/v1alpha2", "kind": "NginxOperator", "metadata": {"name": "web", "namespace": "`+n+`"},
		  "spec": {"replicas": 1, "ports": [{"name": "http", "containerPort": 80}]}}`, "apply", "-f", "-")
	}
	// nginx_operator_instances counts the NginxOperators of the controller's cache by
	// condition: only the one in its namespace, once it has conditions (which the stack's
	// own controller may have written first). Its own reconcile of that one follows.
	var instances float64
	waitFor(t, 2*time.Minute, "the confined controller to count and reconcile the NginxOperator of its namespace", func() bool {
		instances = scrapeSum(t, metricsURL, `nginx_operator_instances{condition="Ready"}`)
		return instances >= 1 && scrapeSum(t, metricsURL, `nginx_operator_reconciles_total`) > 0
	})
	// The stack's controller has reconciled the one elsewhere: a controller watching there
	// would have it in its cache by now.
	mustKubectl(t, "", "-n", other, "wait", "--for=jsonpath={.status.observedGeneration}=1", "--timeout=60s", "ngx/web")
	if got := scrapeSum(t, metricsURL, `nginx_operator_instances{condition="Ready"}`); got != 1 {
		t.Errorf("the confined controller counts %v NginxOperators, want only the one in %s", got, ns)
	}
	if log := confined.Log(); strings.Contains(log, "forbidden") || strings.Contains(log, other) {
		t.Errorf("the confined controller was refused something or saw %s:\n%s", other, log)
	}
	t.Logf("confined to %s with a RoleBinding there: ready, counts %v NginxOperator(s) while %s has one too", ns, instances, other)
}

// scrapeSum reads a series' sum from a plain-HTTP /metrics.
func scrapeSum(t *testing.T, url, series string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m, err := framework.ParseMetrics(body)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Sum(series)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDeployCertsAppliesSecretsServerSide: hack/deploy-certs.sh (--etcd-only, into a
// namespace of its own) applies its Secrets server-side, so no private key lands in a
// last-applied-configuration annotation, and removes the one a client-side apply of an
// earlier version left; a second run (a renewal) takes the same way.
func TestDeployCertsAppliesSecretsServerSide(t *testing.T) {
	t.Parallel()
	ns := "deploy-certs-e2e"
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--wait=false") })
	mustKubectl(t, "", "create", "namespace", ns)
	// What the script's client-side apply used to leave.
	mustKubectl(t, `{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls", "metadata": {"name": "nginx-operator-etcd-client-tls", "namespace": "`+ns+`"},
	  "stringData": {"tls.crt": "old", "tls.key": "old-private-key", "ca.crt": "old"}}`, "apply", "-f", "-")
	if !strings.Contains(get(t, "-n", ns, "get", "secret", "nginx-operator-etcd-client-tls", "-o", "jsonpath={.metadata.annotations}"), "last-applied-configuration") {
		t.Fatal("the client-side apply left no annotation; the test proves nothing")
	}
	for run := range 2 {
		cmd := exec.Command(filepath.Join(repoRoot, "hack", "deploy-certs.sh"), "--etcd-only")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+adminKubeconfig(), "KUBECTL=/usr/bin/kubectl", "NAMESPACE="+ns)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/deploy-certs.sh --etcd-only, run %d: %v\n%s", run+1, err, out)
		}
		for _, name := range []string{"nginx-operator-etcd-ca", "nginx-operator-etcd-server-tls", "nginx-operator-etcd-peer-tls", "nginx-operator-etcd-client-tls"} {
			got := get(t, "-n", ns, "get", "secret", name, "-o",
				`jsonpath={.type} {.metadata.annotations} {range .metadata.managedFields[?(@.operation=="Apply")]}{.manager}{end}`)
			if strings.Contains(got, "last-applied-configuration") || !strings.HasPrefix(got, "kubernetes.io/tls ") || !strings.HasSuffix(got, " nginx-operator-deploy-certs") {
				t.Errorf("run %d: Secret %s: type, annotations and appliers %.200q; want kubernetes.io/tls, no last-applied-configuration, nginx-operator-deploy-certs", run+1, name, got)
			}
		}
	}
	if key := get(t, "-n", ns, "get", "secret", "nginx-operator-etcd-client-tls", "-o", `jsonpath={.data.tls\.key}`); key == "b2xkLXByaXZhdGUta2V5" {
		t.Error("the script left the old key in place")
	}
}
