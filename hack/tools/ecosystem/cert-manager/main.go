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

// Command cert-manager runs the parts of cert-manager v1 that nginx-operator's cert-manager
// overlay uses, out of cluster with the kubeconfig in $KUBECONFIG: the controllers of the
// cert-manager controller binary for self-signed and CA issuers and for certificates, and
// the CA injector for APIServices. cert-manager's command packages (cmd/controller,
// cmd/cainjector) are modules of their own that the Go module proxy does not serve, so this
// main registers the same controller packages from the module it does serve.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// version is the cert-manager module this is built from, for the injector's field manager.
const version = "v1.21.2"

// controllers are the controller binary's controllers that issue from Issuers of kind
// selfSigned and ca: the Issuer status, CertificateRequest approval and signing, and the
// Certificate life cycle (trigger, key, request, issuing, readiness, old revisions).
var controllers = []string{
	"issuers", "certificaterequests-approver", "certificaterequests-issuer-ca", "certificaterequests-issuer-selfsigned",
	"certificates-trigger", "certificates-key-manager", "certificates-request-manager", "certificates-issuing",
	"certificates-readiness", "certificates-revision-manager",
}

func main() {
	klog.InitFlags(nil)
	flag.Parse()
	// The controllers log through controller-runtime's logger as well as klog.
	ctrl.SetLogger(klog.NewKlogr())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, os.Getenv("KUBECONFIG")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string) error {
	if kubeconfig == "" {
		return fmt.Errorf("set KUBECONFIG to the cluster's kubeconfig")
	}
	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig: kubeconfig, KubernetesAPIQPS: 20, KubernetesAPIBurst: 50,
		IssuerOptions: controllerpkg.IssuerOptions{ClusterResourceNamespace: "cert-manager"},
	})
	if err != nil {
		return err
	}
	var running []controllerpkg.Interface
	for _, name := range controllers {
		build, ok := controllerpkg.Known()[name]
		if !ok {
			return fmt.Errorf("cert-manager %s has no controller %q", version, name)
		}
		c, err := build(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		running = append(running, c)
	}
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())

	injector, err := newInjector(ctx, kubeconfig)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, c := range running {
		wg.Go(func() { _ = c.Run(2, ctx) })
	}
	err = injector.Start(ctx)
	wg.Wait()
	return err
}

// newInjector is the cainjector binary's manager with only the APIService injector, fed
// from Certificates (the cert-manager.io/inject-ca-from annotation).
func newInjector(ctx context.Context, kubeconfig string) (ctrl.Manager, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// The injector applies caBundle with the user agent's first part as its field manager.
	cfg.UserAgent = "cert-manager-cainjector/" + version
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiregistrationv1.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return nil, err
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor:        map[string]bool{"apiservice": true},
	})
	return mgr, err
}
