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

package main

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const controllerScrape = `# HELP nginx_operator_writes_total API writes.
# TYPE nginx_operator_writes_total counter
nginx_operator_writes_total{kind="Deployment"} 1000
nginx_operator_writes_total{kind="NginxOperatorStatus"} 2500
nginx_operator_writes_total{kind="Service"} 1000
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 3000
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 2000
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 1500
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PUT"} 2400
rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PUT"} 100
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="nginxoperator",result="success"} 4000
controller_runtime_reconcile_total{controller="nginxoperator",result="error"} 10
controller_runtime_reconcile_total{controller="other",result="success"} 7
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
`

const kubeScrape = `# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 1000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="status",verb="PUT",version="v1"} 3000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="PUT",version="v1"} 1000
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="services",scope="resource",subresource="",verb="APPLY",version="v1"} 1000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 50
`

const operatorScrape = `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="operator.example.com",resource="nginxoperators",scope="resource",subresource="status",verb="PUT",version="v1alpha2"} 2400
apiserver_request_total{code="409",component="apiserver",dry_run="",group="operator.example.com",resource="nginxoperators",scope="resource",subresource="status",verb="PUT",version="v1alpha2"} 100
apiserver_request_total{code="201",component="apiserver",dry_run="",group="operator.example.com",resource="nginxoperators",scope="namespace",subresource="",verb="POST",version="v1alpha2"} 1000
`

func mustParse(t *testing.T, text string) metricSnapshot {
	t.Helper()
	s, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMetricSums(t *testing.T) {
	s := mustParse(t, controllerScrape)
	if diff := cmp.Diff(map[string]float64{"PATCH": 2000, "POST": 1500, "PUT": 2500}, s.sum("rest_client_requests_total", isWrite, "method")); diff != "" {
		t.Errorf("writes by method (-want +got):\n%s", diff)
	}
	if got := s.value("controller_runtime_reconcile_total", labelIn("controller", "nginxoperator")); got != 4010 {
		t.Errorf("reconciles = %v, want 4010", got)
	}
	if got := s.value("absent_total", nil); got != 0 {
		t.Errorf("an absent family sums to %v", got)
	}
	if _, err := parseMetrics(strings.NewReader("not a metric line {")); err == nil {
		t.Error("garbage parsed without an error")
	}
}

func TestConvergenceWritesAgreeWithTheServers(t *testing.T) {
	empty := probeSnapshot{controller: metricSnapshot{}, kube: metricSnapshot{}, operator: metricSnapshot{}}
	after := probeSnapshot{controller: mustParse(t, controllerScrape), kube: mustParse(t, kubeScrape), operator: mustParse(t, operatorScrape)}
	w := convergenceWrites(empty, after, 1000)
	wantServer := map[string]float64{"APPLY deployments": 1000, "APPLY services": 1000, "PUT nginxoperators/status": 2500}
	if diff := cmp.Diff(wantServer, w.Server); diff != "" {
		t.Errorf("server-side writes (-want +got):\n%s", diff)
	}
	if w.Total != 6000 || w.PerObject != 6 {
		t.Errorf("total %v, per object %v; want 6000 (the client's count, Events included) and 6", w.Total, w.PerObject)
	}
	// 2500 status writes counted by the reconciler, 2500 by the server (100 conflicts).
	w.Failed = map[string]float64{"NginxOperatorStatus": 0}
	if notes := crossCheck("x", w); len(notes) != 0 {
		t.Errorf("matching counts noted: %q", notes)
	}
	// A counter that misses writes is caught.
	w.ByKind["Deployment"] = 10
	if notes := crossCheck("x", w); len(notes) != 1 || !strings.Contains(notes[0], "Deployment") {
		t.Errorf("a missed Deployment write is not noted: %q", notes)
	}
	// Between two identical snapshots nothing was written.
	if w := convergenceWrites(after, after, 1000); w.Total != 0 || len(w.Server) != 0 || len(w.ClientByMethod) != 0 {
		t.Errorf("identical snapshots count writes: %+v", w)
	}
}

func TestConvergenceBounds(t *testing.T) {
	lower, writeBound, formula := convergenceBounds(1000, 400)
	if lower != 2.5 || writeBound != 7.5 {
		t.Errorf("bounds %v, %v; want 2.5 s and 7.5 s", lower, writeBound)
	}
	if !strings.Contains(formula, "1000 / 400/s") {
		t.Errorf("formula %q does not show its numbers", formula)
	}
	if lower, _, _ := convergenceBounds(1000, 0); lower != 0 || math.IsInf(lower, 0) {
		t.Errorf("no rate gives a bound of %v", lower)
	}
}

func TestConvergenceMarkdown(t *testing.T) {
	r := &ConvergenceResult{N: 1000, Replicas: 1, CreateSeconds: 3, ConvergeSeconds: 30, CreateRate: 400, LowerBoundSeconds: 2.5, RatioToLowerBound: 12,
		Writes: ConvergenceWrites{ByKind: map[string]float64{"Deployment": 1000}, PerObject: 5}, SteadyStateSeconds: 60,
		ClusterWrites: map[string]float64{"pods ": 3000, "deployments status": 2000}, Notes: []string{"a note"},
		Namespaces: 10, ControllerRSSBytes: 50 << 20, ControllerPeakRSSBytes: 60 << 20, Reviews: 4, ReviewsPerReconcile: 0.002}
	run := &ConvergenceRun{N: 1000, Command: "make bench", Result: r}
	md := run.Markdown()
	for _, want := range []string{"## Controller convergence: 1000 NginxOperators", "Measured by `make bench`", "10 namespaces of 100",
		"| controller RSS, converged (peak) | 50.0 MiB (60.0 MiB) |", "4 (0.0020 per reconcile", "| converged in (from the first create) | **30.0 s** |", "**12.0x**", "pods 3000, deployments status 2000", "- a note"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if (*ConvergenceResult)(nil).Markdown() != "" {
		t.Error("a missing result renders something")
	}
	failed := (&ConvergenceRun{N: 1000, Error: "no stack"}).Markdown()
	if !strings.Contains(failed, "The convergence run failed: no stack") {
		t.Errorf("a failed run does not say why:\n%s", failed)
	}
}

func TestMeanServerSeconds(t *testing.T) {
	hist := func(sum float64, count int) string {
		return `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{group="",resource="services",subresource="",verb="APPLY",le="+Inf"} ` + strconv.Itoa(count) + `
apiserver_request_duration_seconds_sum{group="",resource="services",subresource="",verb="APPLY"} ` + strconv.FormatFloat(sum, 'f', -1, 64) + `
apiserver_request_duration_seconds_count{group="",resource="services",subresource="",verb="APPLY"} ` + strconv.Itoa(count) + `
`
	}
	before := probeSnapshot{kube: mustParse(t, hist(10, 100)), operator: metricSnapshot{}}
	after := probeSnapshot{kube: mustParse(t, hist(60, 200)), operator: metricSnapshot{}}
	if diff := cmp.Diff(map[string]float64{"APPLY services": 0.5}, meanServerSeconds(before, after)); diff != "" {
		t.Errorf("mean seconds (-want +got):\n%s", diff)
	}
}
