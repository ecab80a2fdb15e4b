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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/example/nginx-operator/test/framework"
	"github.com/example/nginx-operator/test/manifests"
)

const (
	promNamespace = "prometheus-e2e"
	// Scrape jobs; the names show in the up series and the targets API.
	controllerJob = "nginx-operator-controller"
	apiserverJob  = "nginx-operator-apiserver"
	anonymousJob  = "nginx-operator-apiserver-anonymous"
	// The stack's etcd (kube-apiserver's here): the same etcd build, so the same metrics as
	// the members of artifacts/deploy, whose job the dashboard's etcd panels select.
	etcdJob = "nginx-operator-etcd"
	// The API group our apiserver serves; its requests are what the dashboard shows.
	operatorGroup = `group="operator.example.com"`
)

// TestPrometheusScrapesControllerAndAPIServer runs a real Prometheus against the
// running controller and our apiserver (both over HTTPS with the token of the shipped
// scraper identity, which hack/local-up.sh applies: both delegate the token review and the
// authorization check for the non-resource URL /metrics to kube-apiserver) and
// checks through PromQL that the operator's metrics are there and move when an
// NginxOperator is created, changed and deleted, and that every metric the Grafana
// dashboard queries was returned by those scrapes.
func TestPrometheusScrapesControllerAndAPIServer(t *testing.T) {
	t.Cleanup(func() {
		kubectl(t, "", "delete", "namespace", promNamespace, "--ignore-not-found", "--wait=false")
	})
	mustKubectl(t, "", "create", "namespace", promNamespace)

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(scraperToken(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	// A third job scrapes the apiserver without credentials: it must be refused, so the
	// apiserver job's success is the token's doing.
	prom := startPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 2s
scrape_configs:
- job_name: %s
  scheme: https
  authorization: {type: Bearer, credentials_file: %q}
  tls_config: {ca_file: %q}
  static_configs: [{targets: ["127.0.0.1:%d"]}]
- job_name: %s
  scheme: https
  authorization: {type: Bearer, credentials_file: %q}
  tls_config: {ca_file: %q}
  static_configs: [{targets: ["127.0.0.1:%d"]}]
- job_name: %s
  scheme: https
  tls_config: {ca_file: %q}
  static_configs: [{targets: ["127.0.0.1:%d"]}]
- job_name: %s
  static_configs: [{targets: ["127.0.0.1:%d"]}]
`, controllerJob, tokenFile, pkiFile("nginx-operator-ca.crt"), ports["CONTROLLER_METRICS_PORT"],
		apiserverJob, tokenFile, pkiFile("nginx-operator-ca.crt"), ports["OPERATOR_APISERVER_PORT"],
		anonymousJob, pkiFile("nginx-operator-ca.crt"), ports["OPERATOR_APISERVER_PORT"],
		etcdJob, ports["ETCD_PORT"]))

	client, err := promapi.NewClient(promapi.Config{Address: prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	q := promQuerier{t: t, api: promv1.NewAPI(client)}

	start := time.Now()
	health := q.waitTargets(2*time.Minute, []string{controllerJob, apiserverJob, etcdJob}, []string{anonymousJob})
	t.Logf("targets up and scraped after %s", time.Since(start).Round(time.Millisecond))
	if h := health[anonymousJob]; h.Health != promv1.HealthBad || !strings.Contains(h.LastError, "403") && !strings.Contains(h.LastError, "401") {
		t.Errorf("scraping the apiserver without credentials: health %s, last error %q; want down with 401 or 403", h.Health, h.LastError)
	}
	for _, job := range []string{controllerJob, apiserverJob} {
		if got := q.scalar(fmt.Sprintf(`sum(up{job=%q})`, job)); got != 1 {
			t.Errorf("up{job=%q} = %v, want 1", job, got)
		}
	}

	// Sums with "or vector(0)": a series that never had a sample is absent, not zero.
	reconciles := `sum(nginx_operator_reconciles_total) or vector(0)`
	available := `sum(nginx_operator_instances{condition="Available"}) or vector(0)`
	apiRequests := func(verb string) string {
		return fmt.Sprintf(`sum(apiserver_request_total{job=%q,%s,resource="nginxoperators",verb=%q}) or vector(0)`, apiserverJob, operatorGroup, verb)
	}
	before := map[string]float64{}
	for _, expr := range []string{reconciles, available, apiRequests("POST"), apiRequests("PATCH"), apiRequests("DELETE")} {
		before[expr] = q.scalar(expr)
	}
	t.Logf("before: reconciles %v, Available instances %v, POST %v, PATCH %v, DELETE %v", before[reconciles], before[available],
		before[apiRequests("POST")], before[apiRequests("PATCH")], before[apiRequests("DELETE")])

	t.Run("create", func(t *testing.T) {
		mustKubectl(t, `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: scraped, namespace: `+promNamespace+`}
spec:
  replicas: 1
  ports: [{name: http, containerPort: 8080}]
`, "create", "-f", "-")
		mustKubectl(t, "", "wait", "-n", promNamespace, "--for", "condition=Available", "--timeout", "90s", "ngx/scraped")
		q.waitAbove(t, reconciles, before)
		q.waitAbove(t, apiRequests("POST"), before)
		q.waitAbove(t, available, before)
	})

	t.Run("update", func(t *testing.T) {
		mustKubectl(t, "", "patch", "-n", promNamespace, "ngx", "scraped", "--type", "merge", "-p", `{"spec":{"replicas":2}}`)
		kc.WaitForOutput(t, 90*time.Second, "2", "get", "-n", promNamespace, "deployment", "scraped", "-o", "jsonpath={.spec.replicas}")
		q.waitAbove(t, reconciles, before)
		q.waitAbove(t, apiRequests("PATCH"), before)
		// The series exist by now, so increase() over the window sees the reconciles
		// of the create and the update: what the dashboard's rate panels plot.
		q.waitAbove(t, `sum(increase(nginx_operator_reconciles_total[1m])) or vector(0)`, map[string]float64{})
	})

	t.Run("delete", func(t *testing.T) {
		mustKubectl(t, "", "delete", "-n", promNamespace, "ngx", "scraped", "--wait=true", "--timeout=60s")
		q.waitAbove(t, apiRequests("DELETE"), before)
		// The gauge comes back down: the cache no longer holds the object.
		q.waitBelow(t, available, before)
	})

	t.Run("every metric the Grafana dashboard queries was scraped", func(t *testing.T) {
		dashboard, err := manifests.LoadDashboard(filepath.Join(repoRoot, manifests.DashboardPath))
		if err != nil {
			t.Fatal(err)
		}
		scraped := map[string]bool{}
		names, _, err := q.api.LabelValues(context.Background(), model.MetricNameLabel, nil, time.Now().Add(-time.Hour), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			scraped[string(n)] = true
		}
		t.Logf("Prometheus holds %d metric names from its scrapes", len(scraped))
		for _, target := range dashboard.Targets() {
			metrics, err := manifests.MetricNames(target.Expr)
			if err != nil {
				t.Errorf("panel %q: %v", target.Panel, err)
				continue
			}
			for _, m := range metrics {
				// nginx's own metrics come from the exporter sidecar of running nginx pods,
				// which kwok's nodes do not run: the real node's Prometheus scrapes them
				// (test/deploy, nginxMetricsFollowLoad) and pkg/nginxexporter names them.
				if strings.HasPrefix(m, "nginx_") && !strings.HasPrefix(m, "nginx_operator_") {
					continue
				}
				if !scraped[m] {
					t.Errorf("panel %q queries %s, which the scrape did not return", target.Panel, m)
				}
			}
			// Prometheus 2.42 itself must accept the expression, with the Grafana
			// variables as Grafana would fill them.
			if _, _, err := q.api.Query(context.Background(), manifests.ExpandGrafanaVariables(target.Expr), time.Now()); err != nil {
				t.Errorf("panel %q: Prometheus refuses %q: %v", target.Panel, target.Expr, err)
			}
		}
	})
}

// promQuerier asks Prometheus' HTTP API.
type promQuerier struct {
	t   *testing.T
	api promv1.API
}

// scalar evaluates an expression that yields one sample and returns its value.
func (q promQuerier) scalar(expr string) float64 {
	q.t.Helper()
	v, err := q.value(expr)
	if err != nil {
		q.t.Fatal(err)
	}
	return v
}

func (q promQuerier) value(expr string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, _, err := q.api.Query(ctx, expr, time.Now())
	if err != nil {
		return 0, fmt.Errorf("query %s: %w", expr, err)
	}
	vec, ok := res.(model.Vector)
	if !ok || len(vec) != 1 {
		return 0, fmt.Errorf("query %s: want one sample, got %v", expr, res)
	}
	return float64(vec[0].Value), nil
}

// waitAbove waits until expr exceeds its value in before (0 when not there) and
// records the new value there, so the next step must move it again.
func (q promQuerier) waitAbove(t *testing.T, expr string, before map[string]float64) {
	t.Helper()
	q.waitMove(t, expr, before, "rise above", func(now, was float64) bool { return now > was })
}

// waitBelow waits until expr falls below its value in before.
func (q promQuerier) waitBelow(t *testing.T, expr string, before map[string]float64) {
	t.Helper()
	q.waitMove(t, expr, before, "fall below", func(now, was float64) bool { return now < was })
}

func (q promQuerier) waitMove(t *testing.T, expr string, before map[string]float64, how string, moved func(now, was float64) bool) {
	t.Helper()
	was, start := before[expr], time.Now()
	var now float64
	var err error
	if !framework.Poll(90*time.Second, 500*time.Millisecond, func() bool {
		now, err = q.value(expr)
		return err == nil && moved(now, was)
	}) {
		t.Fatalf("%s did not %s %v within 90 s (last %v, error %v)", expr, how, was, now, err)
	}
	t.Logf("%s: %v -> %v, seen by Prometheus after %s", expr, was, now, time.Since(start).Round(time.Millisecond))
	before[expr] = now
}

// waitTargets waits until the targets API reports the targets of the jobs in up healthy
// and those of the jobs in scraped scraped at least once (up or down), and until the
// up series of every job can be queried (the targets API reports a scrape's health
// before the scrape's samples are committed), and returns the targets by job.
func (q promQuerier) waitTargets(timeout time.Duration, up, scraped []string) map[string]promv1.ActiveTarget {
	q.t.Helper()
	byJob := map[string]promv1.ActiveTarget{}
	var err error
	if !framework.Poll(timeout, 500*time.Millisecond, func() bool {
		var res promv1.TargetsResult
		if res, err = q.api.Targets(context.Background()); err != nil {
			return false
		}
		for _, target := range res.Active {
			byJob[target.ScrapePool] = target
		}
		done := true
		for _, job := range up {
			done = done && byJob[job].Health == promv1.HealthGood
		}
		for _, job := range scraped {
			done = done && byJob[job].Health != promv1.HealthUnknown && byJob[job].Health != ""
		}
		for _, job := range append(up, scraped...) {
			if !done {
				break
			}
			_, err = q.value(fmt.Sprintf(`sum(up{job=%q})`, job))
			done = err == nil
		}
		return done
	}) {
		q.t.Fatalf("targets not as wanted within %s (up: %v, scraped: %v; targets API error %v): %+v", timeout, up, scraped, err, byJob)
	}
	for _, job := range append(up, scraped...) {
		tg := byJob[job]
		q.t.Logf("target %s: health %s, last scrape took %.3fs, last error %q", job, tg.Health, tg.LastScrapeDuration, tg.LastError)
	}
	return byJob
}
