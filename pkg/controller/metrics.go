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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// controller-runtime already counts every reconcile request and its latency
// (controller_runtime_reconcile_total, ..._errors_total, ..._time_seconds); the
// metrics here say what those cannot: what the reconciles of live NginxOperators
// achieved, which writes they made, and the state of the managed objects.

var reconcilesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "nginx_operator_reconciles_total",
	Help: "Reconciles of existing NginxOperators by outcome: success (the Deployment and the Service are as specified), " +
		"blocked (a same-named Deployment or Service belongs to someone else), operand_failed (applying the Deployment or the " +
		"Service failed; OperatorDegraded names it and the reconcile is retried with backoff) or error (reading or writing " +
		"failed otherwise). Requests for deleted NginxOperators are not counted; controller_runtime_reconcile_total counts every request.",
}, []string{"result"})

var writesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "nginx_operator_writes_total",
	Help: "API writes made by the reconciler that succeeded, by kind (Deployment, Service, NginxOperatorStatus). Flat at steady state.",
}, []string{"kind"})

var writeErrorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "nginx_operator_write_errors_total",
	Help: "API writes made by the reconciler that failed, by kind (Deployment, Service, NginxOperatorStatus). " +
		"While the API server refuses an operand this grows by one per retry, and the retries back off.",
}, []string{"kind"})

// countWrite records the outcome of one API write and passes its error through.
func countWrite(kind string, err error) error {
	if err != nil {
		writeErrorsTotal.WithLabelValues(kind).Inc()
	} else {
		writesTotal.WithLabelValues(kind).Inc()
	}
	return err
}

var instancesDesc = prometheus.NewDesc("nginx_operator_instances",
	"NginxOperators by condition type and status, reported by the elected leader only: a standby replica reports "+
		"no samples, so a sum over replicas counts each NginxOperator once.",
	[]string{"condition", "status"}, nil)

var stalledDesc = prometheus.NewDesc("nginx_operator_stalled",
	"1 for each NginxOperator whose Stalled condition is True, labelled with its namespace, name and the condition's "+
		"reason (ContainerCrashing when nginx keeps exiting, as it does when it rejects its configuration; PodsUnschedulable, "+
		"ImagePullFailed, OperandDeploymentFailed, ...); no sample for the others, so a series ends when the condition clears "+
		"or the NginxOperator is deleted. Reported by the elected leader only.",
	[]string{"namespace", "name", "reason"}, nil)

// instancesCollector counts NginxOperators by condition from the informer cache at
// scrape time, so the gauge can never drift from the objects, and reports each stalled
// one (nginx_operator_stalled) from the same list.
type instancesCollector struct {
	reader client.Reader
	// elected closes when this replica becomes the leader (or at once without leader
	// election); until then it reports nothing, as a standby's view would double-count.
	elected <-chan struct{}
}

func (c instancesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- instancesDesc
	ch <- stalledDesc
}

func (c instancesCollector) Collect(ch chan<- prometheus.Metric) {
	select {
	case <-c.elected:
	default:
		return
	}
	// A scrape must not hang while the cache is still syncing.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := &v1alpha2.NginxOperatorList{}
	if err := c.reader.List(ctx, list); err != nil {
		ch <- prometheus.NewInvalidMetric(instancesDesc, err)
		ch <- prometheus.NewInvalidMetric(stalledDesc, err)
		return
	}
	counts := map[[2]string]int{}
	for _, no := range list.Items {
		for _, cond := range no.Status.Conditions {
			counts[[2]string{cond.Type, string(cond.Status)}]++
			if cond.Type == v1alpha2.ConditionStalled && cond.Status == metav1.ConditionTrue {
				ch <- prometheus.MustNewConstMetric(stalledDesc, prometheus.GaugeValue, 1, no.Namespace, no.Name, cond.Reason)
			}
		}
	}
	for key, n := range counts {
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(n), key[0], key[1])
	}
}

// RegisterMetrics adds the controller's metrics to controller-runtime's registry.
// elected is the manager's Elected() channel.
func RegisterMetrics(cache client.Reader, elected <-chan struct{}) error {
	for _, c := range []prometheus.Collector{reconcilesTotal, writesTotal, writeErrorsTotal, instancesCollector{reader: cache, elected: elected}} {
		if err := metrics.Registry.Register(c); err != nil {
			return err
		}
	}
	return nil
}
