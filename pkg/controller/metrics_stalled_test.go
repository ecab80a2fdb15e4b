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
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestStalledIsOneSeriesPerStalledNginxOperator: nginx_operator_stalled has one sample
// per NginxOperator whose Stalled condition is True, with its namespace, name and reason,
// none for the others, none from a standby, and the series ends with the condition or
// the object.
func TestStalledIsOneSeriesPerStalledNginxOperator(t *testing.T) {
	withStalled := func(namespace, name string, status metav1.ConditionStatus, reason string) *v1alpha2.NginxOperator {
		no := sample(name)
		no.Namespace = namespace
		no.Status.Conditions = []metav1.Condition{
			{Type: v1alpha2.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, LastTransitionTime: metav1.Now()},
			{Type: v1alpha2.ConditionStalled, Status: status, Reason: reason, LastTransitionTime: metav1.Now()},
		}
		return no
	}
	rejected := withStalled("shop", "web", metav1.ConditionTrue, v1alpha2.ReasonContainerCrashing)
	c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(
		rejected,
		withStalled("shop", "api", metav1.ConditionFalse, v1alpha2.ReasonOperatorSucceeded),
		withStalled("team-b", "web", metav1.ConditionTrue, v1alpha2.ReasonPodsUnschedulable),
		withStalled("team-b", "starting", metav1.ConditionFalse, v1alpha2.ReasonRolloutInProgress),
	).Build()

	elected := make(chan struct{})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(instancesCollector{reader: c, elected: elected})
	if n, err := testutil.GatherAndCount(reg, "nginx_operator_stalled"); err != nil || n != 0 {
		t.Fatalf("standby: %d samples (%v), want none", n, err)
	}
	close(elected)

	if got, want := stalledSamples(t, reg), "shop/web ContainerCrashing, team-b/web PodsUnschedulable"; got != want {
		t.Errorf("nginx_operator_stalled: %s, want %s", got, want)
	}

	// The pods run again: the series ends.
	rejected.Status.Conditions[1].Status = metav1.ConditionFalse
	rejected.Status.Conditions[1].Reason = v1alpha2.ReasonOperatorSucceeded
	if err := c.Update(context.Background(), rejected); err != nil {
		t.Fatal(err)
	}
	if got, want := stalledSamples(t, reg), "team-b/web PodsUnschedulable"; got != want {
		t.Errorf("after the condition cleared: %s, want %s", got, want)
	}

	// The object is deleted: so is its series.
	if err := c.Delete(context.Background(), withStalled("team-b", "web", "", "")); err != nil {
		t.Fatal(err)
	}
	if got := stalledSamples(t, reg); got != "" {
		t.Errorf("after the delete: %s, want no sample", got)
	}

	if problems, err := testutil.GatherAndLint(reg, "nginx_operator_stalled"); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// stalledSamples lists the samples of nginx_operator_stalled as "namespace/name reason",
// sorted, and checks that each is 1.
func stalledSamples(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var samples []string
	for _, f := range families {
		if f.GetName() != "nginx_operator_stalled" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if v := m.GetGauge().GetValue(); v != 1 {
				t.Errorf("%v = %v, want 1", labels, v)
			}
			samples = append(samples, labels["namespace"]+"/"+labels["name"]+" "+labels["reason"])
		}
	}
	sort.Strings(samples)
	return strings.Join(samples, ", ")
}
