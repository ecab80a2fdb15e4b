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

// Command controller reconciles NginxOperators into nginx Deployments and Services.
package main

import (
	"flag"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/nginx-operator/pkg/controller"
)

func main() {
	var opts controller.Options
	var qps float64
	var burst int
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8443", "Address of the /metrics endpoint; 0 disables it.")
	flag.BoolVar(&opts.MetricsSecure, "metrics-secure", true, "Serve /metrics over HTTPS to clients kube-apiserver authenticates and authorizes (get on the non-resource URL /metrics); false serves plain HTTP to anyone.")
	flag.StringVar(&opts.MetricsCertDir, "metrics-cert-dir", "", "Directory with the metrics serving certificate (tls.crt, tls.key), reloaded on change; without them a self-signed certificate is used.")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	flag.StringVar(&opts.PprofAddr, "pprof-bind-address", "0", "Address of the /debug/pprof endpoints, for profiling; 0 disables them.")
	flag.BoolVar(&opts.LeaderElect, "leader-elect", false, "Run leader election (a Lease) so only one replica reconciles.")
	flag.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "nginx-operator-system", "Namespace of the leader election Lease.")
	flag.StringVar(&opts.LeaderElectionID, "leader-election-id", "nginx-operator-controller", "Name of the leader election Lease.")
	flag.DurationVar(&opts.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a standby waits before taking over an unrenewed Lease.")
	flag.IntVar(&opts.MaxConcurrentReconciles, "max-concurrent-reconciles", 16, "NginxOperators reconciled in parallel.")
	flag.DurationVar(&opts.MaxRetryDelay, "max-retry-delay", controller.DefaultMaxRetryDelay, "Longest backoff between retries of an NginxOperator whose Deployment or Service the API server refuses.")
	flag.Float64Var(&qps, "kube-api-qps", 0, "Client-side limit on the controller's requests per second, all of them together; 0 leaves the limiting to the API servers' Priority and Fairness.")
	flag.IntVar(&burst, "kube-api-burst", 0, "Requests above --kube-api-qps allowed at once (default: twice --kube-api-qps).")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	cfg, err := ctrl.GetConfig() // honours --kubeconfig and KUBECONFIG
	if err != nil {
		log.Error(err, "loading kubeconfig")
		os.Exit(1)
	}
	if err := controller.LimitRequests(cfg, qps, burst); err != nil {
		log.Error(err, "checking the flags")
		os.Exit(2)
	}
	mgr, err := controller.NewManager(cfg, opts)
	if err != nil {
		log.Error(err, "creating manager")
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running manager")
		os.Exit(1)
	}
}
