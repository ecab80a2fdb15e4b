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

package manifests

// The Helm chart (charts/nginx-operator), the source of the manifests in artifacts/ (make
// generate renders them and checks the overlays against it): linted, and rendered with the
// values kustomize has no overlay for.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/example/nginx-operator/test/framework"
)

var (
	repoRoot = filepath.Join("..", "..")
	chartDir = filepath.Join(repoRoot, "charts", "nginx-operator")
)

// chartNamespace is the namespace artifacts/deploy installs into.
const chartNamespace = "nginx-operator-system"

// objects splits a multi-document YAML stream into objects keyed by kind, namespace and
// name; comments, key order and document order do not count.
func objects(t *testing.T, stream []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if obj == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		key := fmt.Sprintf("%s %v/%v", obj["kind"], meta["namespace"], meta["name"])
		if _, dup := out[key]; dup {
			t.Errorf("%s is rendered twice", key)
		}
		out[key] = obj
	}
	return out
}

func TestChartLints(t *testing.T) {
	for _, values := range [][]string{nil, {"certificates.source=cert-manager,monitoring.enabled=true,monitoring.dashboard.enabled=true,etcd.snapshots.enabled=true"}, {"controller.watchNamespaces={web,shop}"}} {
		args := []string{"lint", "--strict", chartDir}
		for _, v := range values {
			args = append(args, "--set", v)
		}
		out, err := exec.Command(framework.ToolBinary(t, "HELM_BIN"), args...).CombinedOutput()
		if err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if bytes.Contains(out, []byte("[WARNING]")) || bytes.Contains(out, []byte("[ERROR]")) {
			t.Errorf("helm %s is not clean:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestChartValues renders the options kustomize has no overlay for, in another namespace,
// and checks each lands where it should.
func TestChartValues(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte(`
image: {repository: registry.example.com/nginx-operator, tag: v9.9.9}
imagePullSecrets: [{name: regcred}]
apiserver:
  nodeSelector: {disk: ssd}
  tolerations: [{key: dedicated, operator: Exists}]
  resources: {requests: {cpu: "1"}}
  encryptionConfig: {secretName: ops-encryption, key: encryption.yaml}
controller: {priorityClassName: high, watchNamespaces: [web, shop]}
etcd:
  members: 5
  storage: {size: 8Gi, storageClassName: fast}
monitoring:
  enabled: true
  labels: {release: kube-prometheus-stack}
  dashboard: {enabled: true}
rbac: {aggregateToDefaultRoles: false}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(framework.ToolBinary(t, "HELM_BIN"), "template", "nginx-operator", chartDir, "--namespace", "ops", "--values", values)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	rendered := objects(t, out)
	for key, obj := range rendered {
		if b, _ := json.Marshal(obj); bytes.Contains(b, []byte(chartNamespace)) {
			t.Errorf("installed into ops, %s still names %s", key, chartNamespace)
		}
	}
	get := func(key string, path ...string) any {
		var v any = rendered[key]
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		return v
	}
	jsonOf := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	expect := func(what string, got any, want string) {
		t.Helper()
		if jsonOf(got) != want {
			t.Errorf("%s = %s, want %s", what, jsonOf(got), want)
		}
	}

	apiserver := get("Deployment ops/nginx-operator-apiserver", "spec", "template", "spec").(map[string]any)
	container := apiserver["containers"].([]any)[0].(map[string]any)
	expect("apiserver image", container["image"], `"registry.example.com/nginx-operator:v9.9.9"`)
	expect("apiserver imagePullSecrets", apiserver["imagePullSecrets"], `[{"name":"regcred"}]`)
	expect("apiserver nodeSelector", apiserver["nodeSelector"], `{"disk":"ssd"}`)
	expect("apiserver tolerations", apiserver["tolerations"], `[{"key":"dedicated","operator":"Exists"}]`)
	// Helm merges maps given as values into the defaults (null removes a key).
	expect("apiserver resources", container["resources"], `{"limits":{"memory":"512Mi"},"requests":{"cpu":"1","memory":"128Mi"}}`)
	args := container["args"].([]any)
	expect("apiserver --encryption-provider-config", args[len(args)-1], `"--encryption-provider-config=/etc/nginx-operator/encryption/encryption.yaml"`)
	mounts := container["volumeMounts"].([]any)
	expect("apiserver encryption mount", mounts[len(mounts)-1], `{"mountPath":"/etc/nginx-operator/encryption","name":"encryption-config","readOnly":true}`)
	volumes := apiserver["volumes"].([]any)
	expect("apiserver encryption volume", volumes[len(volumes)-1], `{"name":"encryption-config","secret":{"defaultMode":288,"secretName":"ops-encryption"}}`)
	etcdServers := strings.Split(strings.TrimPrefix(container["args"].([]any)[0].(string), "--etcd-servers="), ",")
	if len(etcdServers) != 5 || etcdServers[4] != "https://nginx-operator-etcd-4.nginx-operator-etcd.ops.svc:2379" {
		t.Errorf("apiserver --etcd-servers: %v", etcdServers)
	}
	for _, role := range []string{"nginx-operator-view", "nginx-operator-edit"} {
		if _, ok := rendered["ClusterRole <nil>/"+role]; ok {
			t.Errorf("rbac.aggregateToDefaultRoles=false still renders ClusterRole %s", role)
		}
	}
	expect("controller priorityClassName", get("Deployment ops/nginx-operator-controller", "spec", "template", "spec", "priorityClassName"), `"high"`)
	controllerArgs := get("Deployment ops/nginx-operator-controller", "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["args"].([]any)
	expect("controller --namespaces", controllerArgs[len(controllerArgs)-1], `"--namespaces=web,shop"`)
	if _, ok := rendered["ClusterRoleBinding <nil>/nginx-operator-controller"]; ok {
		t.Error("controller.watchNamespaces still binds the controller's rules cluster-wide")
	}
	for _, ns := range []string{"web", "shop"} {
		expect("RoleBinding "+ns, get("RoleBinding "+ns+"/nginx-operator-controller", "roleRef", "name"), `"nginx-operator-controller"`)
		expect("RoleBinding "+ns+" subject", get("RoleBinding "+ns+"/nginx-operator-controller", "subjects"), `[{"kind":"ServiceAccount","name":"nginx-operator-controller","namespace":"ops"}]`)
	}
	expect("metrics-auth binding", get("ClusterRoleBinding <nil>/nginx-operator-controller-metrics-auth", "subjects"), `[{"kind":"ServiceAccount","name":"nginx-operator-controller","namespace":"ops"}]`)

	expect("etcd replicas", get("StatefulSet ops/nginx-operator-etcd", "spec", "replicas"), `5`)
	claim := get("StatefulSet ops/nginx-operator-etcd", "spec", "volumeClaimTemplates").([]any)[0].(map[string]any)["spec"]
	expect("etcd volume", claim, `{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"8Gi"}},"storageClassName":"fast"}`)
	command := get("StatefulSet ops/nginx-operator-etcd", "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["command"]
	if !slices.Contains(command.([]any), any("--initial-cluster=nginx-operator-etcd-0=https://nginx-operator-etcd-0.nginx-operator-etcd.ops.svc:2380,"+
		"nginx-operator-etcd-1=https://nginx-operator-etcd-1.nginx-operator-etcd.ops.svc:2380,nginx-operator-etcd-2=https://nginx-operator-etcd-2.nginx-operator-etcd.ops.svc:2380,"+
		"nginx-operator-etcd-3=https://nginx-operator-etcd-3.nginx-operator-etcd.ops.svc:2380,nginx-operator-etcd-4=https://nginx-operator-etcd-4.nginx-operator-etcd.ops.svc:2380")) {
		t.Errorf("etcd command does not list the 5 members: %v", command)
	}

	for _, key := range []string{"ServiceMonitor ops/nginx-operator-controller", "ServiceMonitor ops/nginx-operator-apiserver",
		"ServiceMonitor ops/nginx-operator-etcd", "PrometheusRule ops/nginx-operator"} {
		expect(key+" release label", get(key, "metadata", "labels", "release"), `"kube-prometheus-stack"`)
	}
	dashboard, err := os.ReadFile(filepath.Join(repoRoot, "artifacts", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	expect("dashboard ConfigMap label", get("ConfigMap ops/nginx-operator-dashboard", "metadata", "labels", "grafana_dashboard"), `"1"`)
	if got := get("ConfigMap ops/nginx-operator-dashboard", "data", "nginx-operator.json"); got != strings.TrimRight(string(dashboard), "\n") {
		t.Errorf("the dashboard ConfigMap does not hold artifacts/monitoring/grafana-dashboard.json (make generate copies it into charts/nginx-operator/files/)")
	}
}
