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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

var reconcilesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "nginx_operator_reconciles_total",
	Help: "Reconciles of NginxOperators by result: success, blocked (an operand is controlled by something else) or error.",
}, []string{"result"})

var writesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "nginx_operator_writes_total",
	Help: "API writes made by the reconciler, by kind (Deployment, Service, NginxOperatorStatus). Flat at steady state.",
}, []string{"kind"})

var instancesDesc = prometheus.NewDesc("nginx_operator_instances",
	"Managed NginxOperators by condition type and status.", []string{"condition", "status"}, nil)

// instancesCollector counts NginxOperators by condition from the informer cache at
// scrape time, so the gauge can never drift from the objects.
type instancesCollector struct {
	reader client.Reader
}

func (c instancesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- instancesDesc }

func (c instancesCollector) Collect(ch chan<- prometheus.Metric) {
	// A scrape must not hang while the cache is still syncing.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := &v1alpha2.NginxOperatorList{}
	if err := c.reader.List(ctx, list); err != nil {
		ch <- prometheus.NewInvalidMetric(instancesDesc, err)
		return
	}
	counts := map[[2]string]int{}
	for _, no := range list.Items {
		for _, cond := range no.Status.Conditions {
			counts[[2]string{cond.Type, string(cond.Status)}]++
		}
	}
	for key, n := range counts {
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(n), key[0], key[1])
	}
}

// RegisterMetrics adds the controller's metrics to controller-runtime's registry.
func RegisterMetrics(cache client.Reader) error {
	for _, c := range []prometheus.Collector{reconcilesTotal, writesTotal, instancesCollector{reader: cache}} {
		if err := metrics.Registry.Register(c); err != nil {
			return err
		}
	}
	return nil
}
