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

// The dashboard against Grafana's own schema: the Go types of the grafana-foundation-sdk,
// generated from the schemas Grafana publishes, decoded strictly (an unknown field or a
// missing required option fails) and validated.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// exportEnvelope are the keys Grafana's "Export for sharing externally" wraps around the
// dashboard model (the data source inputs, the plugins it requires, library panels); the
// import dialog reads and removes them, so the model itself is what is left.
var exportEnvelope = []string{"__inputs", "__requires", "__elements"}

// checkDashboardSchema decodes a dashboard export strictly into Grafana's types and
// validates it.
func checkDashboardSchema(raw []byte) error {
	var export map[string]json.RawMessage
	if err := json.Unmarshal(raw, &export); err != nil {
		return err
	}
	for _, key := range exportEnvelope {
		delete(export, key)
	}
	model, err := json.Marshal(export)
	if err != nil {
		return err
	}
	// The panel and data source types decode their options with these registered.
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard //nolint:staticcheck // the export is the classic JSON model (schemaVersion 39), not dashboardv2's
	// The SDK returns its error list typed, so an empty one is a non-nil error.
	var errs cog.BuildErrors
	if err := d.UnmarshalJSONStrict(model); err != nil && !(errors.As(err, &errs) && len(errs) == 0) {
		return err
	}
	return d.Validate()
}

func TestDashboardMatchesGrafanaSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", DashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDashboardSchema(raw); err != nil {
		t.Fatalf("%s does not match Grafana's dashboard schema:\n%v", DashboardPath, err)
	}

	// The check bites: an unknown field, and a stat panel without a required option.
	var export map[string]any
	if err := json.Unmarshal(raw, &export); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(map[string]any){
		"an unknown top-level field": func(d map[string]any) { d["refreshIntervals"] = []string{"5s"} },
		"a stat panel without justifyMode": func(d map[string]any) {
			for _, p := range d["panels"].([]any) {
				if panel := p.(map[string]any); panel["type"] == "stat" {
					delete(panel["options"].(map[string]any), "justifyMode")
					return
				}
			}
			t.Fatal("the dashboard has no stat panel")
		},
	} {
		var copied map[string]any
		b, _ := json.Marshal(export)
		_ = json.Unmarshal(b, &copied)
		mutate(copied)
		b, _ = json.Marshal(copied)
		err := checkDashboardSchema(b)
		if err == nil {
			t.Errorf("%s passed the schema check", name)
			continue
		}
		t.Logf("%s: %s", name, strings.SplitN(err.Error(), "\n", 2)[0])
	}
}
