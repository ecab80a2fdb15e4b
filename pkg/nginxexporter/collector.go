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

package nginxexporter

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric of nginx itself. The names are those of NGINX's own
// exporter (nginx-prometheus-exporter), except that the two connection counters end in
// _total as Prometheus names counters.
const Namespace = "nginx"

var (
	upDesc = prometheus.NewDesc(Namespace+"_up",
		"1 when the last scrape read nginx's stub_status page, 0 when it failed (nginx down, or its configuration does not include the status server).", nil, nil)
	activeDesc = prometheus.NewDesc(Namespace+"_connections_active",
		"Open client connections, including waiting ones.", nil, nil)
	readingDesc = prometheus.NewDesc(Namespace+"_connections_reading",
		"Open client connections where nginx is reading the request header.", nil, nil)
	writingDesc = prometheus.NewDesc(Namespace+"_connections_writing",
		"Open client connections where nginx is writing the response.", nil, nil)
	waitingDesc = prometheus.NewDesc(Namespace+"_connections_waiting",
		"Idle client connections waiting for a request (keep-alive).", nil, nil)
	acceptedDesc = prometheus.NewDesc(Namespace+"_connections_accepted_total",
		"Client connections accepted since nginx started.", nil, nil)
	handledDesc = prometheus.NewDesc(Namespace+"_connections_handled_total",
		"Client connections handled since nginx started; fewer than accepted when a resource limit was reached.", nil, nil)
	requestsDesc = prometheus.NewDesc(Namespace+"_http_requests_total",
		"Client requests since nginx started.", nil, nil)
)

// Collector reads the stub_status page on every Collect: a scrape sees nginx as it is
// then, and nothing is read between scrapes.
type Collector struct {
	// URL of the stub_status page, e.g. http://127.0.0.1:8079/stub_status.
	URL string
	// Client reads the page; its Timeout bounds a scrape.
	Client *http.Client
	Logger *slog.Logger
}

// NewCollector reads url with timeout.
func NewCollector(url string, timeout time.Duration, logger *slog.Logger) *Collector {
	return &Collector{URL: url, Client: &http.Client{Timeout: timeout}, Logger: logger}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{upDesc, activeDesc, readingDesc, writingDesc, waitingDesc, acceptedDesc, handledDesc, requestsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A failed read yields nginx_up 0 and no other
// nginx metric: the exporter itself stays up and says why in its log.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s, err := c.scrape(context.Background())
	if err != nil {
		if c.Logger != nil {
			c.Logger.Warn("reading nginx's stub_status", "url", c.URL, "err", err)
		}
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(activeDesc, prometheus.GaugeValue, float64(s.Active))
	ch <- prometheus.MustNewConstMetric(readingDesc, prometheus.GaugeValue, float64(s.Reading))
	ch <- prometheus.MustNewConstMetric(writingDesc, prometheus.GaugeValue, float64(s.Writing))
	ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(acceptedDesc, prometheus.CounterValue, float64(s.Accepted))
	ch <- prometheus.MustNewConstMetric(handledDesc, prometheus.CounterValue, float64(s.Handled))
	ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(s.Requests))
}

func (c *Collector) scrape(ctx context.Context) (StubStatus, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return StubStatus{}, err
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return StubStatus{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return StubStatus{}, fmt.Errorf("%s answered %s: is the status server included in nginx's configuration?", c.URL, resp.Status)
	}
	return ParseStubStatus(resp.Body)
}
