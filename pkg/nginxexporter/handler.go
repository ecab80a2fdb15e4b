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
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Option adds to what Handler serves.
type Option func(*options)

type options struct {
	collectors []prometheus.Collector
	handlers   map[string]http.Handler
}

// WithCollector adds c's metrics to /metrics.
func WithCollector(c prometheus.Collector) Option {
	return func(o *options) { o.collectors = append(o.collectors, c) }
}

// WithHandler serves h on pattern (an http.ServeMux pattern, e.g. "GET /reload").
func WithHandler(pattern string, h http.Handler) Option {
	return func(o *options) { o.handlers[pattern] = h }
}

// Handler serves /metrics (nginx's, the exporter's Go runtime and process metrics) and
// /healthz, which answers as long as the exporter runs, whatever nginx does: nginx's
// own probes decide whether the pod is ready. A nil c exports no stub_status metric.
func Handler(c *Collector, logger *slog.Logger, opts ...Option) (http.Handler, error) {
	o := options{handlers: map[string]http.Handler{}}
	for _, opt := range opts {
		opt(&o)
	}
	cols := []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	if c != nil {
		cols = append(cols, c)
	}
	reg := prometheus.NewRegistry()
	for _, col := range append(cols, o.collectors...) {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		// One scrape at a time reads nginx: a slow nginx is not asked twice as often.
		MaxRequestsInFlight: 1,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	for pattern, h := range o.handlers {
		mux.Handle(pattern, h)
	}
	return mux, nil
}
