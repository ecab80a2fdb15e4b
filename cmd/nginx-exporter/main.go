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
//
// With --reload-content-dir it also reloads nginx in place (package nginxreload): once
// the kubelet has refreshed the content volumes with what the pod's content-hashes
// annotation asks for, it sends nginx's master SIGHUP, reports the result on /reload and
// as nginx_config_* metrics, and copies nginx's error log to its own stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/nginxexporter"
	"github.com/example/nginx-operator/pkg/nginxreload"
)

type config struct {
	listen        string
	stubStatusURL string
	timeout       time.Duration

	// Reload in place is off while reloadContentDir is "".
	reloadContentDir  string
	reloadDesiredFile string
	reloadErrorLog    string
	reloadIncludeFile string
	reloadHealthURL   string
	reloadAccessLog   string
	reloadInterval    time.Duration
	reloadTimeout     time.Duration
	// nginxLog receives the lines of reloadErrorLog.
	nginxLog io.Writer
}

func main() {
	cfg := config{nginxLog: os.Stderr}
	flag.StringVar(&cfg.listen, "listen-address", ":9113", "Address of /metrics, /healthz and /reload.")
	flag.StringVar(&cfg.stubStatusURL, "stub-status-url", "http://127.0.0.1:8079/stub_status", "nginx's stub_status page, read on every scrape; \"\" exports no stub_status metric.")
	flag.DurationVar(&cfg.timeout, "timeout", 2*time.Second, "Time limit of one read of the stub_status page.")
	flag.StringVar(&cfg.reloadContentDir, "reload-content-dir", "", "Directory of the content volumes, one subdirectory per volume ("+reload.ContentDirectory+" in the pod); \"\" turns reload in place off.")
	flag.StringVar(&cfg.reloadDesiredFile, "reload-desired-file", reload.DesiredFile, "File holding the pod's "+reload.ContentHashesAnnotation+" annotation: the content nginx is to load.")
	flag.StringVar(&cfg.reloadErrorLog, "reload-error-log", "", "nginx's error log ("+reload.ErrorLog+" in the pod): read for the reason of a refused reload and copied to stderr; \"\": a reload's result comes from nginx's workers alone.")
	flag.StringVar(&cfg.reloadIncludeFile, "reload-include-file", "", "On a pod of a staged reload, the file that says which configuration nginx includes; \"\": none.")
	flag.StringVar(&cfg.reloadHealthURL, "reload-health-url", "", "URL requested after each reload that loaded content, its answer reported in "+reload.StatePath+"; \"\": none.")
	flag.StringVar(&cfg.reloadAccessLog, "reload-access-log", "", "nginx's access log in the format "+strconv.Quote(reload.TrafficLogFormat)+" ("+reload.AccessLog+" in the pod), counted for "+reload.TrafficPath+"; \"\": none.")
	flag.DurationVar(&cfg.reloadInterval, "reload-interval", nginxreload.DefaultInterval, "How often the content volumes are compared with what is asked for.")
	flag.DurationVar(&cfg.reloadTimeout, "reload-timeout", nginxreload.DefaultTimeout, "Time nginx has after a SIGHUP to start a new worker or to log why not.")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %v\n", flag.Args())
		os.Exit(2)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := listenAndRun(ctx, cfg, logger); err != nil {
		logger.Error("exiting", "err", err)
		stop()
		os.Exit(1)
	}
}

func listenAndRun(ctx context.Context, cfg config, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	return run(ctx, ln, cfg, logger)
}

// run serves on ln, and reloads nginx when that is on, until ctx is done.
func run(ctx context.Context, ln net.Listener, cfg config, logger *slog.Logger) error {
	var collector *nginxexporter.Collector
	if cfg.stubStatusURL != "" {
		collector = nginxexporter.NewCollector(cfg.stubStatusURL, cfg.timeout, logger)
	}
	var reloader *nginxreload.Reloader
	var opts []nginxexporter.Option
	if cfg.reloadContentDir != "" {
		reloader = &nginxreload.Reloader{
			ContentDir:  cfg.reloadContentDir,
			DesiredFile: cfg.reloadDesiredFile,
			IncludeFile: cfg.reloadIncludeFile,
			HealthURL:   cfg.reloadHealthURL,
			ErrorLog:    cfg.reloadErrorLog,
			LogOut:      cfg.nginxLog,
			Interval:    cfg.reloadInterval,
			Timeout:     cfg.reloadTimeout,
			Logger:      logger,
		}
		opts = append(opts, nginxexporter.WithCollector(reloader),
			nginxexporter.WithHandler("GET "+reload.StatePath, reloader.StateHandler()))
	}
	var traffic *nginxreload.TrafficLog
	if cfg.reloadContentDir != "" && cfg.reloadAccessLog != "" {
		traffic = &nginxreload.TrafficLog{Path: cfg.reloadAccessLog, Interval: cfg.reloadInterval, Logger: logger}
		opts = append(opts, nginxexporter.WithHandler("GET "+reload.TrafficPath, traffic.Handler()))
	}
	handler, err := nginxexporter.Handler(collector, logger, opts...)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	if reloader != nil {
		wg.Go(func() { reloader.Run(ctx) })
	}
	if traffic != nil {
		wg.Go(func() { traffic.Run(ctx) })
	}
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	logger.Info("serving", "address", ln.Addr().String(), "stubStatus", cfg.stubStatusURL, "reloadContentDir", cfg.reloadContentDir)
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
