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

package deploy

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/example/nginx-operator/test/framework"
)

// The Prometheus the test has the Prometheus Operator make, where and as whom the
// prometheus overlay expects kube-prometheus' (prometheus-rbac.yaml, the etcd metrics
// NetworkPolicy).
const (
	monitoringNS     = "monitoring"
	prometheusName   = "k8s"
	prometheusSA     = "prometheus-k8s"
	prometheusPodSel = "app.kubernetes.io/name=prometheus"
	// The test Prometheus' scrape interval for every target.
	scrapeInterval = "5s"
)

// prometheusOperatorScrapes runs the Prometheus Operator (built by make tools from
// hack/tools/ecosystem) against the prometheus overlay applied over the
// deployment: its ServiceMonitors and PrometheusRule become the operator's generated
// configuration, and a Prometheus pod the operator makes from our image of the Prometheus
// its go.mod selects loads exactly that configuration, scrapes every controller, apiserver
// and etcd pod (the apiserver and the controller with the scraper's token over TLS), and
// loads and evaluates the rules; its PodMonitor makes it scrape nginx's own metrics.
func prometheusOperatorScrapes(t *testing.T, refs map[string]string) {
	operatorBin, crds := framework.ToolBinary(t, "PROMETHEUS_OPERATOR_BIN"), framework.ToolBinary(t, "PROMETHEUS_OPERATOR_CRDS_DIR")
	image, version := importPrometheusImage(t)
	// Server-side: the CRDs exceed the last-applied annotation's size.
	kc.Apply(t, 5*time.Minute, "", "-f", crds)
	kc.WaitEstablished(t, 3*time.Minute, "crd/prometheuses.monitoring.coreos.com",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	op, err := framework.StartProcessWithEnv(filepath.Join(stack.LocalDir, "logs", "prometheus-operator.log"),
		[]string{"KUBECONFIG=" + stack.Kubeconfig()}, operatorBin,
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--prometheus-config-reloader="+image)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Stop(os.Interrupt, 10*time.Second) })

	start := time.Now()
	// Scrapes every 5 s instead of 30 (the PodMonitor's interval and the Prometheus'
	// default, which the ServiceMonitors follow), shortened for the test: it waits for
	// targets to turn up and for counters to move.
	mustKubectl(t, "", "apply", "-k", overlayWithImages(t, "artifacts/overlays/prometheus", refs,
		`{target: {kind: PodMonitor, name: nginx-operator-nginx}, patch: '[{"op": "replace", "path": "/spec/podMetricsEndpoints/0/interval", "value": "`+scrapeInterval+`"}]'}`))
	// What the overlay adds to the base goes again afterwards; the base stays as it was.
	t.Cleanup(func() {
		for _, f := range componentResources(t, "prometheus") {
			kubectl(t, "", "delete", "--ignore-not-found", "-f", f)
		}
	})
	mustKubectl(t, "", "create", "namespace", monitoringNS)
	t.Cleanup(func() {
		start := time.Now()
		kubectl(t, "", "delete", "namespace", monitoringNS, "--timeout=3m")
		t.Logf("namespace %s deleted in %s", monitoringNS, framework.Describe(time.Since(start)))
	})
	selectNS := `{"matchLabels": {"kubernetes.io/metadata.name": "` + systemNS + `"}}`
	mustKubectl(t, `{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "`+prometheusSA+`", "namespace": "`+monitoringNS+`"}}
{"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus", "metadata": {"name": "`+prometheusName+`", "namespace": "`+monitoringNS+`"},
 "spec": {"image": "`+image+`", "version": "`+version+`", "replicas": 1, "serviceAccountName": "`+prometheusSA+`",
  "serviceMonitorSelector": {}, "serviceMonitorNamespaceSelector": `+selectNS+`,
  "podMonitorSelector": {}, "podMonitorNamespaceSelector": `+selectNS+`,
  "ruleSelector": {}, "ruleNamespaceSelector": `+selectNS+`, "evaluationInterval": "10s", "scrapeInterval": "`+scrapeInterval+`"}}`, "apply", "-f", "-")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("at the failure:\n%s\n%s", get(t, "get", "prometheus", "-n", monitoringNS, "-o", "yaml"), get(t, "get", "all", "-n", monitoringNS))
		}
	})

	// The operator's configuration, from the Secret it writes for the Prometheus pod.
	var generated []string
	waitFor(t, 2*time.Minute, "the operator's generated configuration with a job per ServiceMonitor and PodMonitor", func() bool {
		data := get(t, "get", "secret", "-n", monitoringNS, "prometheus-"+prometheusName, "--ignore-not-found", "-o", `jsonpath={.data.prometheus\.yaml\.gz}`)
		if data == "" {
			return false
		}
		generated = scrapeJobs(t, gunzipBase64(t, data))
		return len(generated) == 4
	})
	want := []string{"podMonitor/" + systemNS + "/nginx-operator-nginx/0", "serviceMonitor/" + systemNS + "/nginx-operator-apiserver/0",
		"serviceMonitor/" + systemNS + "/nginx-operator-controller/0", "serviceMonitor/" + systemNS + "/nginx-operator-etcd/0"}
	if !slices.Equal(generated, want) {
		t.Fatalf("the operator generated the jobs %v, want %v", generated, want)
	}
	t.Logf("the operator generated a configuration with the jobs %v %s after the overlay was applied", generated, framework.Describe(time.Since(start)))

	// The operator writes the configuration Secret before it creates the StatefulSet, and
	// kubectl rollout status fails at once on a StatefulSet that does not exist yet.
	waitFor(t, 2*time.Minute, "the operator to create the StatefulSet prometheus-"+prometheusName, func() bool {
		return get(t, "get", "statefulset", "-n", monitoringNS, "prometheus-"+prometheusName, "--ignore-not-found", "-o", "name") != ""
	})
	mustKubectl(t, "", "rollout", "status", "-n", monitoringNS, "statefulset/prometheus-"+prometheusName, "--timeout=3m")
	pod := readyPods(t, monitoringNS, prometheusPodSel)
	if len(pod) != 1 {
		t.Fatalf("Prometheus pods %v, want one", pod)
	}
	ip := get(t, "get", "pod", "-n", monitoringNS, pod[0], "-o", "jsonpath={.status.podIP}")
	if parsed := net.ParseIP(ip); parsed == nil || !localNet.Contains(parsed) {
		t.Fatalf("Prometheus' pod IP %q is not on the local node's network", ip)
	}
	api := "http://" + net.JoinHostPort(ip, "9090") + "/api/v1/"
	var loaded struct {
		YAML string `json:"yaml"`
	}
	prometheusAPI(t, api+"status/config", &loaded)
	if jobs := scrapeJobs(t, []byte(loaded.YAML)); !slices.Equal(jobs, generated) {
		t.Errorf("Prometheus %s loaded the jobs %v, the operator generated %v", version, jobs, generated)
	}

	// Every pod behind the three ServiceMonitors is a target, and each is up. The
	// PodMonitor's targets are the nginx pods of every namespace, which the parts beside
	// this one create, break and delete: nginxMetricsFollowLoad judges its own.
	wantTargets := map[string]int{
		want[1]: len(readyPods(t, systemNS, apiserverSelector)),
		want[2]: len(readyPods(t, systemNS, "app.kubernetes.io/name=nginx-operator-controller")),
		want[3]: len(readyPods(t, systemNS, etcdSelector)),
	}
	var summary string
	d := waitFor(t, 3*time.Minute, "every target up", func() bool {
		var targets struct {
			ActiveTargets []struct {
				ScrapePool string `json:"scrapePool"`
				ScrapeURL  string `json:"scrapeUrl"`
				Health     string `json:"health"`
				LastError  string `json:"lastError"`
			} `json:"activeTargets"`
		}
		prometheusAPI(t, api+"targets?state=active", &targets)
		up, all := map[string]int{}, map[string]int{}
		var lines []string
		for _, target := range targets.ActiveTargets {
			if target.ScrapePool == want[0] {
				continue
			}
			all[target.ScrapePool]++
			if target.Health == "up" {
				up[target.ScrapePool]++
			}
			lines = append(lines, fmt.Sprintf("%s %s %s %s", target.ScrapePool, target.ScrapeURL, target.Health, target.LastError))
		}
		sort.Strings(lines)
		summary = strings.Join(lines, "\n")
		for job, n := range wantTargets {
			if up[job] != n || all[job] != n {
				return false
			}
		}
		return len(all) == len(wantTargets)
	})
	t.Logf("every target up %s after the Prometheus pod was ready:\n%s", framework.Describe(d), summary)

	// The PrometheusRule's groups, loaded and evaluated without error.
	ruleGroups := prometheusRuleGroups(t)
	d = waitFor(t, 2*time.Minute, "every rule of the PrometheusRule loaded and evaluated", func() bool {
		var rules struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name           string `json:"name"`
					Health         string `json:"health"`
					LastError      string `json:"lastError"`
					LastEvaluation string `json:"lastEvaluation"`
				} `json:"rules"`
			} `json:"groups"`
		}
		prometheusAPI(t, api+"rules", &rules)
		var names []string
		for _, g := range rules.Groups {
			names = append(names, g.Name)
			for _, r := range g.Rules {
				if r.Health != "ok" {
					return false
				}
			}
		}
		sort.Strings(names)
		return slices.Equal(names, ruleGroups)
	})
	t.Logf("rule groups %v loaded and every rule evaluated ok %s after the pod was ready", ruleGroups, framework.Describe(d))

	nginxMetricsFollowLoad(t, api)
}

// prometheusImage is the image of the Prometheus and config reloader make tools built
// (hack/images/build.sh prometheus), made once per run.
var prometheusImage = &build{what: "the prometheus image", run: buildPrometheusImage}

func buildPrometheusImage() error {
	script := exec.Command(filepath.Join(stack.RepoRoot, "hack", "images", "build.sh"), "prometheus")
	script.Env, script.Dir = stack.Env(), stack.RepoRoot
	if out, err := script.CombinedOutput(); err != nil {
		return &commandError{"building the prometheus image", err, out}
	}
	return nil
}

// importPrometheusImage imports the image prometheusImage made into the node's
// containerd.
func importPrometheusImage(t *testing.T) (image, version string) {
	t.Helper()
	start := time.Now()
	refs := images(t)
	image = refs["PROMETHEUS_IMAGE"]
	imp := exec.Command(filepath.Join(stack.RepoRoot, "hack", "images", "import.sh"),
		"--address", filepath.Join(stack.LocalDir, "node", "containerd", "containerd.sock"), refs["PROMETHEUS_ARCHIVE"])
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("importing %s: %v\n%s", refs["PROMETHEUS_ARCHIVE"], err, out)
	}
	t.Logf("imported %s in %s", image, framework.Describe(time.Since(start)))
	return image, "v" + image[strings.LastIndex(image, ":")+1:]
}

// prometheusAPI decodes the data of a Prometheus HTTP API answer into out.
func prometheusAPI(t *testing.T, url string, out any) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.Status != "success" {
		t.Fatalf("GET %s: %d %v %.300s", url, resp.StatusCode, err, body)
	}
	if err := json.Unmarshal(answer.Data, out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// scrapeJobs returns the sorted job names of a Prometheus configuration.
func scrapeJobs(t *testing.T, config []byte) []string {
	t.Helper()
	var c struct {
		ScrapeConfigs []struct {
			JobName string `json:"job_name"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(config, &c); err != nil {
		t.Fatalf("a Prometheus configuration that is not YAML: %v", err)
	}
	var jobs []string
	for _, sc := range c.ScrapeConfigs {
		jobs = append(jobs, sc.JobName)
	}
	sort.Strings(jobs)
	return jobs
}

func gunzipBase64(t *testing.T, data string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// prometheusRuleGroups returns the sorted group names of the overlay's PrometheusRule.
func prometheusRuleGroups(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(stack.RepoRoot, "artifacts", "overlays", "components", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Name string `json:"name"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range rule.Spec.Groups {
		names = append(names, g.Name)
	}
	sort.Strings(names)
	return names
}

// componentResources returns the files of a component under artifacts/overlays/components.
func componentResources(t *testing.T, name string) []string {
	t.Helper()
	dir := filepath.Join(stack.RepoRoot, "artifacts", "overlays", "components", name)
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil || len(k.Resources) == 0 {
		t.Fatalf("the resources of component %s: %v", name, err)
	}
	var files []string
	for _, r := range k.Resources {
		files = append(files, filepath.Join(dir, r))
	}
	return files
}
