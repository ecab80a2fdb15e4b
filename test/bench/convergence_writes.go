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

import "fmt"

// convergenceWrites counts the writes between two snapshots.
func convergenceWrites(before, after probeSnapshot, n int) ConvergenceWrites {
	w := ConvergenceWrites{
		ByKind:         metricDelta(before.controller.sum("nginx_operator_writes_total", nil, "kind"), after.controller.sum("nginx_operator_writes_total", nil, "kind")),
		Failed:         metricDelta(before.controller.sum("nginx_operator_write_errors_total", nil, "kind"), after.controller.sum("nginx_operator_write_errors_total", nil, "kind")),
		ClientByMethod: metricDelta(before.controller.sum("rest_client_requests_total", isWrite, "method"), after.controller.sum("rest_client_requests_total", isWrite, "method")),
		Server:         serverWrites(after),
	}
	for k, v := range serverWrites(before) {
		w.Server[k] -= v
		if w.Server[k] == 0 {
			delete(w.Server, k)
		}
	}
	w.Total = max(metricTotal(w.ClientByMethod), metricTotal(w.Server))
	if n > 0 {
		w.PerObject = w.Total / float64(n)
	}
	return w
}

// serverWrites is what the servers counted of the controller's writes: only the
// controller applies Deployments and Services, and only it writes NginxOperator status.
func serverWrites(s probeSnapshot) map[string]float64 {
	out := s.kube.sum("apiserver_request_total",
		allOf(labelIn("verb", "APPLY"), labelIn("resource", "deployments", "services"), labelIn("subresource", "")),
		"verb", "resource")
	for k, v := range s.operator.sum("apiserver_request_total",
		allOf(isWrite, labelIn("resource", "nginxoperators"), labelIn("subresource", "status")),
		"verb", "resource") {
		out[k+"/status"] += v
	}
	return out
}

// meanServerSeconds is the servers' mean duration of the controller's kinds of writes
// between two snapshots.
func meanServerSeconds(before, after probeSnapshot) map[string]float64 {
	kube := func(l map[string]string) bool {
		return l["subresource"] == "" && (l["verb"] == "APPLY" && (l["resource"] == "deployments" || l["resource"] == "services") ||
			l["verb"] == "POST" && l["resource"] == "ipaddresses")
	}
	status := allOf(labelIn("verb", "PUT"), labelIn("resource", "nginxoperators"), labelIn("subresource", "status"))
	out := map[string]float64{}
	for _, m := range []struct {
		snap   func(probeSnapshot) metricSnapshot
		match  func(map[string]string) bool
		suffix string
	}{
		{func(p probeSnapshot) metricSnapshot { return p.kube }, kube, ""},
		{func(p probeSnapshot) metricSnapshot { return p.operator }, status, "/status"},
	} {
		sumsBefore, countsBefore := m.snap(before).histogram("apiserver_request_duration_seconds", m.match, "verb", "resource")
		sumsAfter, countsAfter := m.snap(after).histogram("apiserver_request_duration_seconds", m.match, "verb", "resource")
		sums, counts := metricDelta(sumsBefore, sumsAfter), metricDelta(countsBefore, countsAfter)
		for k, n := range counts {
			out[k+m.suffix] = sums[k] / n
		}
	}
	return out
}

// crossCheck notes where the controller's own counters disagree with the servers'.
func crossCheck(phase string, w ConvergenceWrites) []string {
	var notes []string
	pairs := []struct{ kind, server string }{
		{"Deployment", "APPLY deployments"},
		{"Service", "APPLY services"},
		{"NginxOperatorStatus", "PUT nginxoperators/status"},
	}
	for _, p := range pairs {
		counted := w.ByKind[p.kind] + w.Failed[p.kind]
		if counted != w.Server[p.server] {
			notes = append(notes, fmt.Sprintf("%s: the controller counted %.0f %s writes, the server %.0f (%s)", phase, counted, p.kind, w.Server[p.server], p.server))
		}
	}
	return notes
}

func reconciles(before, after probeSnapshot) float64 {
	match := labelIn("controller", "nginxoperator")
	return after.controller.value("controller_runtime_reconcile_total", match) - before.controller.value("controller_runtime_reconcile_total", match)
}

func cpuSeconds(s probeSnapshot) float64 { return s.controller.value("process_cpu_seconds_total", nil) }

// reviews counts the SubjectAccessReviews our apiserver sent between two snapshots.
func reviews(before, after probeSnapshot) float64 {
	const name = "apiserver_delegated_authz_request_total"
	return after.operator.value(name, nil) - before.operator.value(name, nil)
}
