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

package apiserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	generatedopenapi "github.com/example/nginx-operator/pkg/generated/openapi"
)

const etcdPathPrefix = "/registry/operator.example.com"

// Options are the command-line options of the apiserver.
type Options struct {
	ServerRun   *genericoptions.ServerRunOptions
	Recommended *genericoptions.RecommendedOptions
	// Standalone serves without a kube-apiserver: its own CA, client certificates, system:masters only.
	Standalone bool
	// DataDir holds the embedded etcd data and, in standalone mode, the PKI and kubeconfig.
	DataDir string

	Out io.Writer
}

// NewOptions returns options with the defaults of an aggregated API server.
func NewOptions(out io.Writer) *Options {
	o := &Options{
		ServerRun:   genericoptions.NewServerRunOptions(),
		Recommended: genericoptions.NewRecommendedOptions(etcdPathPrefix, Codecs.LegacyCodec(v1alpha2.SchemeGroupVersion)),
		DataDir:     "nginx-operator-data",
		Out:         out,
	}
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(v1alpha2.SchemeGroupVersion, schema.GroupKind{Group: v1alpha2.GroupName})
	o.Recommended.SecureServing.BindPort = 8443
	// Without it, open watches (kube-controller-manager keeps several through the
	// aggregator) hold a graceful shutdown for the full request timeout.
	o.ServerRun.ShutdownWatchTerminationGracePeriod = 5 * time.Second
	// Unauthenticated requests get 401 except on health endpoints (anonymousOnlyForHealth),
	// which kubelet probes reach without credentials, sub-paths such as /readyz/etcd included.
	o.Recommended.Authorization.AlwaysAllowPaths = healthPaths
	return o
}

// AddFlags registers the flags of the apiserver.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.ServerRun.AddUniversalFlags(fs)
	o.Recommended.AddFlags(fs)
	fs.BoolVar(&o.Standalone, "standalone", o.Standalone,
		"Serve without a kube-apiserver: create a CA, a serving certificate and an admin kubeconfig under --data-dir, accept client certificates from that CA only and authorize only the group system:masters.")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory for the embedded etcd (used when --etcd-servers is empty) and, with --standalone, the PKI and kubeconfig. Created if missing.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.usesEmbeddedEtcd() || o.Standalone {
		if o.DataDir == "" {
			errs = append(errs, fmt.Errorf("--data-dir is required with --standalone or without --etcd-servers"))
		}
	}
	if !o.usesEmbeddedEtcd() {
		errs = append(errs, o.Recommended.Etcd.Validate()...)
	}
	errs = append(errs, o.ServerRun.Validate()...)
	errs = append(errs, o.Recommended.SecureServing.Validate()...)
	if !o.Standalone {
		errs = append(errs, o.Recommended.Authentication.Validate()...)
		errs = append(errs, o.Recommended.Authorization.Validate()...)
	}
	return utilerrors.NewAggregate(errs)
}

func (o *Options) usesEmbeddedEtcd() bool {
	return len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0
}

// Run starts embedded etcd when needed, then serves until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.usesEmbeddedEtcd() || o.Standalone {
		if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
			return fmt.Errorf("creating --data-dir: %w", err)
		}
	}
	if o.usesEmbeddedEtcd() {
		etcd, err := StartEmbeddedEtcd(o.DataDir)
		if err != nil {
			return err
		}
		// Deferred so etcd outlives the server's graceful shutdown.
		defer etcd.Close()
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{etcd.ClientURL}
		klog.InfoS("Started embedded etcd", "dataDir", o.DataDir, "url", etcd.ClientURL)
	}

	config, err := o.Config()
	if err != nil {
		return err
	}
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// Config turns the options into a server configuration.
func (o *Options) Config() (*Config, error) {
	var pki *standalonePKI
	if o.Standalone {
		var err error
		if pki, err = loadOrCreateStandalonePKI(o.DataDir, o.Recommended.SecureServing.BindAddress); err != nil {
			return nil, err
		}
		o.Recommended.SecureServing.ServerCert.CertKey.CertFile = pki.serving.CertFile
		o.Recommended.SecureServing.ServerCert.CertKey.KeyFile = pki.serving.KeyFile
		// Nothing to delegate to: no kube-apiserver, no admission webhooks, no flow control objects.
		o.Recommended.Authentication = nil
		o.Recommended.Authorization = nil
		o.Recommended.CoreAPI = nil
		o.Recommended.Admission = nil
		o.Recommended.Features.EnablePriorityAndFairness = false
	} else if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed certificates: %w", err)
	}

	serverConfig := genericapiserver.NewRecommendedConfig(Codecs)
	if err := o.ServerRun.ApplyTo(&serverConfig.Config); err != nil {
		return nil, err
	}
	namer := openapi.NewDefinitionNamer(Scheme)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIConfig.Info.Title = "nginx-operator"
	serverConfig.OpenAPIConfig.Info.Version = v1alpha2.SchemeGroupVersion.Version
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIV3Config.Info.Title = "nginx-operator"
	serverConfig.OpenAPIV3Config.Info.Version = v1alpha2.SchemeGroupVersion.Version

	if err := o.Recommended.ApplyTo(serverConfig); err != nil {
		return nil, err
	}
	if pki != nil {
		if err := applyStandaloneSecurity(&serverConfig.Config, pki); err != nil {
			return nil, err
		}
		file, err := writeAdminKubeconfig(o.DataDir, pki, o.Recommended.SecureServing.BindAddress, o.Recommended.SecureServing.BindPort)
		if err != nil {
			return nil, fmt.Errorf("writing kubeconfig: %w", err)
		}
		fmt.Fprintf(o.Out, "Standalone mode: use KUBECONFIG=%s\n", file)
	}
	serverConfig.Authentication.Authenticator = anonymousOnlyForHealth{delegate: serverConfig.Authentication.Authenticator}
	return &Config{GenericConfig: serverConfig}, nil
}
