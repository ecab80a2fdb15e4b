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

package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFlagsSetOptions(t *testing.T) {
	o := NewOptions()
	cmd := NewCommand(context.Background(), o)
	err := cmd.ParseFlags([]string{"--leader-elect", "--max-retry-delay=5s", "--metrics-bind-address=127.0.0.1:9443",
		"--max-concurrent-reconciles=4", "--kube-api-qps=50", "--zap-log-level=debug"})
	if err != nil {
		t.Fatal(err)
	}
	m := o
	if !m.LeaderElect || m.MaxRetryDelay != 5*time.Second || m.MetricsAddr != "127.0.0.1:9443" || m.MaxConcurrentReconciles != 4 || o.QPS != 50 {
		t.Errorf("options after the flags: %+v, qps %v", m, o.QPS)
	}
	if m.ProbeAddr != ":8081" || !m.MetricsSecure || m.LeaseDuration != 15*time.Second {
		t.Errorf("defaults lost: %+v", m)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}

func TestValidateRefusesWhatCannotRun(t *testing.T) {
	o := NewOptions()
	o.MaxRetryDelay, o.MaxConcurrentReconciles = 0, 0
	err := o.Validate()
	for _, flag := range []string{"--max-retry-delay", "--max-concurrent-reconciles"} {
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("Validate() = %v, want it to name %s", err, flag)
		}
	}
}

func TestHelpGroupsFlags(t *testing.T) {
	var out strings.Builder
	cmd := NewCommand(context.Background(), NewOptions())
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"Metrics and probes flags:", "Leader election flags:", "Reconciling flags:", "API client flags:", "Logging flags:", "--kubeconfig", "--zap-log-level"} {
		if !strings.Contains(out.String(), section) {
			t.Errorf("--help lacks %q:\n%s", section, out.String())
		}
	}
}

func TestNamespacesFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		// OLM's olm.targetNamespaces of an AllNamespaces OperatorGroup is "".
		{[]string{"--namespaces="}, nil},
		{[]string{"--namespaces=shop,web"}, []string{"shop", "web"}},
		{[]string{"--namespaces=web, shop,,web", "--namespaces=blog"}, []string{"blog", "shop", "web"}},
	} {
		o := NewOptions()
		if err := NewCommand(context.Background(), o).ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		if got := o.watchedNamespaces(); !slices.Equal(got, c.want) {
			t.Errorf("%q: watched namespaces %q, want %q", c.args, got, c.want)
		}
		if err := o.Validate(); err != nil {
			t.Errorf("%q refused: %v", c.args, err)
		}
	}
	o := NewOptions()
	o.Namespaces = []string{"shop", "Web_1"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--namespaces: "Web_1"`) {
		t.Errorf("Validate() = %v, want it to refuse Web_1", err)
	}
}
