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

// Package manifests checks the shipped artifacts. dashboard.go reads the Grafana
// dashboard and the PromQL in it; the unit tests check it in isolation and the e2e
// suite checks its metric names against what a real Prometheus scraped.
package manifests

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// DashboardPath is the Grafana dashboard, relative to the repository root.
const DashboardPath = "artifacts/monitoring/grafana-dashboard.json"

// Dashboard is the part of Grafana's dashboard JSON model the checks read.
type Dashboard struct {
	Title         string          `json:"title"`
	UID           string          `json:"uid"`
	SchemaVersion int             `json:"schemaVersion"`
	Inputs        []Input         `json:"__inputs"`
	Requires      []Requirement   `json:"__requires"`
	Panels        []Panel         `json:"panels"`
	Templating    json.RawMessage `json:"templating"`
}

// Input is a value Grafana's import asks for, such as the Prometheus data source.
type Input struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	PluginID string `json:"pluginId"`
}

// Requirement is a plugin (panel, data source) or Grafana version the dashboard needs.
type Requirement struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Version string `json:"version"`
}

// Panel is one panel; rows hold their collapsed panels in Panels.
type Panel struct {
	ID         int         `json:"id"`
	Title      string      `json:"title"`
	Type       string      `json:"type"`
	Datasource *Datasource `json:"datasource"`
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *Datasource `json:"datasource"`
	} `json:"targets"`
	Panels []Panel `json:"panels"`
}

// Datasource references a data source by type and uid.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is one query with the title of its panel.
type Target struct {
	Panel string
	Expr  string
}

// LoadDashboard reads and decodes a dashboard file.
func LoadDashboard(path string) (*Dashboard, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &Dashboard{}
	if err := json.Unmarshal(data, d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// AllPanels returns every panel, including those inside rows.
func (d *Dashboard) AllPanels() []Panel {
	var all []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return all
}

// Targets returns every query of every panel.
func (d *Dashboard) Targets() []Target {
	var out []Target
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			out = append(out, Target{Panel: p.Title, Expr: t.Expr})
		}
	}
	return out
}

// grafanaVariables are the built-in interval variables the queries use, with values
// Grafana could choose; they must be replaced before PromQL parses the expression.
var grafanaVariables = strings.NewReplacer(
	"$__rate_interval", "1m",
	"${__rate_interval}", "1m",
	"$__interval", "30s",
	"${__interval}", "30s",
	"$__range", "1h",
	"${__range}", "1h",
)

// ExpandGrafanaVariables fills the interval variables as Grafana would.
func ExpandGrafanaVariables(expr string) string { return grafanaVariables.Replace(expr) }

// MetricNames parses a panel's PromQL (Grafana variables filled) and returns the metric
// names its selectors read, sorted. A selector without a metric name is an error: such a
// query cannot be checked against what was scraped.
func MetricNames(expr string) ([]string, error) {
	parsed, err := parser.ParseExpr(ExpandGrafanaVariables(expr))
	if err != nil {
		return nil, fmt.Errorf("%q does not parse: %w", expr, err)
	}
	names := map[string]bool{}
	var inspectErr error
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			inspectErr = fmt.Errorf("%q: selector %s names no metric", expr, vs)
			return nil
		}
		names[name] = true
		return nil
	})
	if inspectErr != nil {
		return nil, inspectErr
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
