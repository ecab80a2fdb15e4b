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

import (
	"path/filepath"
	"slices"
	"testing"
)

// The e2e suite checks the metric names against a real scrape; here the dashboard is
// checked for what Grafana's import needs and for PromQL that parses.

// minSchemaVersion is the schema of Grafana 9.x exports; older Grafana upgrades or
// refuses newer schemas, and the panels used here (timeseries, stat) need 7.x at least.
const minSchemaVersion = 36

// datasourceRef is how an exported dashboard refers to the data source chosen at import.
const datasourceRef = "${DS_PROMETHEUS}"

func loadDashboard(t *testing.T) *Dashboard {
	t.Helper()
	d, err := LoadDashboard(filepath.Join("..", "..", DashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDashboardHasWhatGrafanaImportNeeds(t *testing.T) {
	d := loadDashboard(t)
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q, uid %q: both are required", d.Title, d.UID)
	}
	if len(d.UID) > 40 {
		t.Errorf("uid %q is longer than Grafana's 40 characters", d.UID)
	}
	if d.SchemaVersion < minSchemaVersion {
		t.Errorf("schemaVersion %d, want >= %d", d.SchemaVersion, minSchemaVersion)
	}
	if !slices.ContainsFunc(d.Inputs, func(in Input) bool {
		return "${"+in.Name+"}" == datasourceRef && in.Type == "datasource" && in.PluginID == "prometheus"
	}) {
		t.Errorf("__inputs %+v: want a prometheus datasource input named DS_PROMETHEUS", d.Inputs)
	}
	required := map[string]bool{}
	for _, r := range d.Requires {
		required[r.Type+"/"+r.ID] = true
	}
	for _, want := range []string{"grafana/grafana", "datasource/prometheus"} {
		if !required[want] {
			t.Errorf("__requires lacks %s", want)
		}
	}

	ids := map[int]string{}
	for _, p := range d.AllPanels() {
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", p.Title, other, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Title == "" {
			t.Errorf("panel %d has no title", p.ID)
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside Grafana's 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if !required["panel/"+p.Type] {
			t.Errorf("panel %q: type %q is not in __requires", p.Title, p.Type)
		}
		if p.Datasource == nil || p.Datasource.UID != datasourceRef {
			t.Errorf("panel %q: datasource %+v, want uid %s", p.Title, p.Datasource, datasourceRef)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		refIDs := map[string]bool{}
		for _, target := range p.Targets {
			if target.Datasource == nil || target.Datasource.UID != datasourceRef {
				t.Errorf("panel %q query %s: datasource %+v, want uid %s", p.Title, target.RefID, target.Datasource, datasourceRef)
			}
			if target.RefID == "" || refIDs[target.RefID] {
				t.Errorf("panel %q: refId %q empty or repeated", p.Title, target.RefID)
			}
			refIDs[target.RefID] = true
		}
	}
}

// TestDashboardQueriesParse parses every query with Prometheus' own PromQL parser and
// checks that the dashboard covers what the issue asks for.
func TestDashboardQueriesParse(t *testing.T) {
	d := loadDashboard(t)
	queried := map[string]bool{}
	for _, target := range d.Targets() {
		names, err := MetricNames(target.Expr)
		if err != nil {
			t.Errorf("panel %q: %v", target.Panel, err)
			continue
		}
		for _, n := range names {
			queried[n] = true
		}
	}
	for _, want := range []string{
		"nginx_operator_reconciles_total",             // reconcile rate and errors
		"nginx_operator_instances",                    // instances by condition
		"apiserver_request_total",                     // API request rate by verb
		"apiserver_request_duration_seconds_bucket",   // API latency by verb
		"etcd_server_has_leader",                      // etcd members with a leader
		"etcd_mvcc_db_total_size_in_bytes",            // etcd database size
		"etcd_server_quota_backend_bytes",             // against its quota
		"etcd_disk_wal_fsync_duration_seconds_bucket", // etcd disk latency
		"nginx_http_requests_total",                   // nginx requests/s per NginxOperator
		"nginx_connections_active",                    // nginx active connections per NginxOperator
		"nginx_up",                                    // pods whose nginx the exporter cannot read
	} {
		if !queried[want] {
			t.Errorf("no panel queries %s", want)
		}
	}
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		want    []string
		wantErr bool
	}{
		{expr: `sum by (verb) (rate(apiserver_request_total{group="operator.example.com"}[$__rate_interval]))`, want: []string{"apiserver_request_total"}},
		{expr: `a_total / on (job) {__name__="b"} or vector(0)`, want: []string{"a_total", "b"}},
		{expr: `histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m])))`, want: []string{"x_bucket"}},
		{expr: `{job="x"}`, wantErr: true},
		{expr: `sum(rate(x[5m])`, wantErr: true},
		{expr: `rate(x[$__unknown])`, wantErr: true},
	} {
		got, err := MetricNames(tc.expr)
		if (err != nil) != tc.wantErr {
			t.Errorf("MetricNames(%q): error %v, want error %v", tc.expr, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && !slices.Equal(got, tc.want) {
			t.Errorf("MetricNames(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
}
