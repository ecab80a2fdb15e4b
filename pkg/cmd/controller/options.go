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

// Package controller turns the controller's command line into a running manager:
// Options → flags → Validate → Run, as pkg/cmd/server does for the apiserver.
package controller

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	cliflag "k8s.io/component-base/cli/flag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/nginx-operator/pkg/controller"
)

// Options are the command-line options of the controller.
type Options struct {
	MetricsAddr string
	// MetricsSecure serves /metrics over HTTPS to clients whose bearer token kube-apiserver
	// authenticates (TokenReview) and authorizes to get the non-resource URL /metrics
	// (SubjectAccessReview), as kubebuilder projects do (metricsauth.go); false serves plain
	// HTTP to anyone.
	MetricsSecure bool
	// MetricsCertDir holds the metrics serving certificate (tls.crt, tls.key), reloaded when
	// it changes; without those files the server uses a self-signed one.
	MetricsCertDir string
	ProbeAddr      string
	// PprofAddr serves net/http/pprof when set; "" or "0" leaves it off.
	PprofAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	LeaseDuration           time.Duration
	MaxConcurrentReconciles int
	// Namespaces confines the controller to these namespaces: its caches list and watch
	// only there (NginxOperators and every kind it reads), so it reconciles nothing
	// elsewhere and its RoleBindings may be per namespace. Empty: every namespace.
	Namespaces []string
	// MaxRetryDelay caps the exponential backoff of a failing NginxOperator, e.g. one
	// whose Service asks for a nodePort that another Service holds: it is retried at
	// least this often, so it recovers soon after the obstacle is gone.
	MaxRetryDelay time.Duration
	// QPS and Burst limit the controller's requests on the client side (0: no limit; API
	// Priority and Fairness protects the servers).
	QPS   float64
	Burst int
	Zap   zap.Options
	// ExporterImage runs the nginx-exporter sidecar of the nginx pods. Empty: the image of
	// the init container ExporterImageContainer of the controller's own Pod (POD_NAMESPACE
	// and POD_NAME, which the manifests set), or, outside a pod, DefaultExporterImage().
	ExporterImage string
}

// NewOptions returns the defaults of an in-cluster controller.
func NewOptions() *Options {
	return &Options{
		MetricsAddr:             ":8443",
		MetricsSecure:           true,
		ProbeAddr:               ":8081",
		PprofAddr:               "0",
		LeaderElectionNamespace: "nginx-operator-system",
		LeaderElectionID:        "nginx-operator-controller",
		LeaseDuration:           15 * time.Second,
		MaxConcurrentReconciles: 16,
		MaxRetryDelay:           controller.DefaultMaxRetryDelay,
	}
}

// AddFlags adds the flags, grouped as --help shows them. kubeconfig is controller-runtime's
// own --kubeconfig flag (ctrl.GetConfig reads it), registered on the Go flag set.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets, kubeconfig *flag.Flag) {
	m := o
	fs := fss.FlagSet("metrics and probes")
	fs.StringVar(&m.MetricsAddr, "metrics-bind-address", m.MetricsAddr, "Address of the /metrics endpoint; 0 disables it.")
	fs.BoolVar(&m.MetricsSecure, "metrics-secure", m.MetricsSecure, "Serve /metrics over HTTPS to clients kube-apiserver authenticates and authorizes (get on the non-resource URL /metrics); false serves plain HTTP to anyone.")
	fs.StringVar(&m.MetricsCertDir, "metrics-cert-dir", m.MetricsCertDir, "Directory with the metrics serving certificate (tls.crt, tls.key), reloaded on change; without them a self-signed certificate is used.")
	fs.StringVar(&m.ProbeAddr, "health-probe-bind-address", m.ProbeAddr, "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&m.PprofAddr, "pprof-bind-address", m.PprofAddr, "Address of the /debug/pprof endpoints, for profiling; 0 disables them.")

	fs = fss.FlagSet("leader election")
	fs.BoolVar(&m.LeaderElect, "leader-elect", m.LeaderElect, "Run leader election (a Lease) so only one replica reconciles.")
	fs.StringVar(&m.LeaderElectionNamespace, "leader-election-namespace", m.LeaderElectionNamespace, "Namespace of the leader election Lease.")
	fs.StringVar(&m.LeaderElectionID, "leader-election-id", m.LeaderElectionID, "Name of the leader election Lease.")
	fs.DurationVar(&m.LeaseDuration, "leader-election-lease-duration", m.LeaseDuration, "How long a standby waits before taking over an unrenewed Lease.")

	fs = fss.FlagSet("reconciling")
	fs.IntVar(&m.MaxConcurrentReconciles, "max-concurrent-reconciles", m.MaxConcurrentReconciles, "NginxOperators reconciled in parallel.")
	fs.StringSliceVar(&m.Namespaces, "namespaces", m.Namespaces, "Comma-separated namespaces the controller watches and reconciles, and nothing outside them (its RBAC can then be RoleBindings there); empty: every namespace. Under OLM it is the OperatorGroup's olm.targetNamespaces.")
	fs.DurationVar(&m.MaxRetryDelay, "max-retry-delay", m.MaxRetryDelay, "Longest backoff between retries of an NginxOperator whose Deployment or Service the API server refuses.")

	fs.StringVar(&m.ExporterImage, "exporter-image", m.ExporterImage, "Image of the nginx-exporter sidecar in nginx pods with spec.metrics on (it holds /nginx-exporter). Empty: the image of the init container "+ExporterImageContainer+" of the controller's own Pod (POD_NAMESPACE, POD_NAME), or "+DefaultExporterImage()+" outside a pod.")

	fs = fss.FlagSet("API client")
	if kubeconfig != nil {
		fs.AddGoFlag(kubeconfig)
	}
	fs.Float64Var(&o.QPS, "kube-api-qps", o.QPS, "Client-side limit on the controller's requests per second, all of them together; 0 leaves the limiting to the API servers' Priority and Fairness.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Requests above --kube-api-qps allowed at once (default: twice --kube-api-qps).")

	logging := flag.NewFlagSet("logging", flag.ContinueOnError)
	o.Zap.BindFlags(logging)
	fss.FlagSet("logging").AddGoFlagSet(logging)
}

// Validate reports flag values the controller cannot run with.
func (o *Options) Validate() error {
	var errs []error
	if o.MaxConcurrentReconciles < 1 {
		errs = append(errs, errors.New("--max-concurrent-reconciles must be at least 1"))
	}
	if o.MaxRetryDelay <= 0 {
		errs = append(errs, errors.New("--max-retry-delay must be positive"))
	}
	if o.LeaseDuration <= 0 {
		errs = append(errs, errors.New("--leader-election-lease-duration must be positive"))
	}
	for _, ns := range o.watchedNamespaces() {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}

// watchedNamespaces is --namespaces without blanks (OLM's annotation may hold "a, b")
// and duplicates, sorted; nil means every namespace.
func (o *Options) watchedNamespaces() []string {
	var out []string
	for _, ns := range o.Namespaces {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

// flagSets is every flag of the command, by group.
func (o *Options) flagSets(kubeconfig *flag.Flag) cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	o.AddFlags(&fss, kubeconfig)
	return fss
}
