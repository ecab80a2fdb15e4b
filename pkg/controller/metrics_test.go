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
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// reconcileCount reads nginx_operator_reconciles_total for one result, or summed over
// all results when result is "".
func reconcileCount(result string) float64 {
	results := []string{result}
	if result == "" {
		results = []string{"success", "blocked", "operand_failed", "error"}
	}
	var n float64
	for _, r := range results {
		n += testutil.ToFloat64(reconcilesTotal.WithLabelValues(r))
	}
	return n
}

// Two replicas run; a sum over both must count each NginxOperator once.
func TestInstancesAreReportedByTheLeaderOnly(t *testing.T) {
	withConditions := func(name string, available metav1.ConditionStatus) *v1alpha2.NginxOperator {
		no := sample(name)
		no.Status.Conditions = []metav1.Condition{
			{Type: v1alpha2.ConditionAvailable, Status: available, Reason: "R", LastTransitionTime: metav1.Now()},
			{Type: v1alpha2.ConditionOperatorDegraded, Status: metav1.ConditionFalse, Reason: "R", LastTransitionTime: metav1.Now()},
		}
		return no
	}
	c := fake.NewClientBuilder().WithScheme(NewScheme()).
		WithObjects(withConditions("a", metav1.ConditionTrue), withConditions("b", metav1.ConditionTrue), withConditions("c", metav1.ConditionFalse)).
		Build()

	elected := make(chan struct{})
	standby := prometheus.NewPedanticRegistry()
	standby.MustRegister(instancesCollector{reader: c, elected: elected})
	if n, err := testutil.GatherAndCount(standby, "nginx_operator_instances"); err != nil || n != 0 {
		t.Fatalf("before election: %d samples (%v), want none", n, err)
	}

	close(elected)
	got := map[string]float64{}
	families, err := standby.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["condition"]+"="+labels["status"]] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{"Available=True": 2, "Available=False": 1, "OperatorDegraded=False": 3}
	if len(got) != len(want) {
		t.Errorf("after election: %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("nginx_operator_instances{%s} = %v, want %v", k, got[k], v)
		}
	}
}
