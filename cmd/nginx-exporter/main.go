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

// Command nginx-exporter exports nginx's stub_status page as Prometheus metrics. The
// controller runs it beside nginx in every pod of an NginxOperator whose spec.metrics is
// on: it reads http://127.0.0.1:8079/stub_status, which the status server the controller
// mounts for nginx serves on the pod's loopback, on each scrape of its /metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/example/nginx-operator/pkg/nginxexporter"
)

func main() {
	listen := flag.String("listen-address", ":9113", "Address of /metrics and /healthz.")
	url := flag.String("stub-status-url", "http://127.0.0.1:8079/stub_status", "nginx's stub_status page, read on every scrape.")
	timeout := flag.Duration("timeout", 2*time.Second, "Time limit of one read of the stub_status page.")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %v\n", flag.Args())
		os.Exit(2)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(*listen, *url, *timeout, logger); err != nil {
		logger.Error("exiting", "err", err)
		os.Exit(1)
	}
}

func run(listen, url string, timeout time.Duration, logger *slog.Logger) error {
	handler, err := nginxexporter.Handler(nginxexporter.NewCollector(url, timeout, logger), logger)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: listen, Handler: handler, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	logger.Info("serving", "address", listen, "stubStatus", url)
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
		// The last scrape finishes; nginx's own shutdown is what the pod waits for.
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
