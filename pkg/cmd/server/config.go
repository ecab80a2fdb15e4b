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

package server

import (
	"fmt"
	"net"

	basecompatibility "k8s.io/component-base/compatibility"
	netutils "k8s.io/utils/net"

	"github.com/example/nginx-operator/pkg/apiserver"
	"github.com/example/nginx-operator/pkg/standalone"
	"github.com/example/nginx-operator/pkg/version"
)

// Config turns completed, valid options into the server's configuration. In standalone
// mode it creates (or reuses) the PKI and writes the admin kubeconfig.
func (o *Options) Config() (*apiserver.Config, error) {
	var pki *standalone.PKI
	if o.Standalone {
		var err error
		if pki, err = standalone.LoadOrCreatePKI(o.DataDir, o.Recommended.SecureServing.BindAddress); err != nil {
			return nil, err
		}
		o.Recommended.SecureServing.ServerCert.CertKey.CertFile = pki.ServingCertFile()
		o.Recommended.SecureServing.ServerCert.CertKey.KeyFile = pki.ServingKeyFile()
	} else if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed certificates: %w", err)
	}

	serverConfig := apiserver.NewRecommendedConfig()
	// Also sets the effective version, nginx-operator's: it decides which API versions are served.
	if err := o.ServerRun.ApplyTo(&serverConfig.Config); err != nil {
		return nil, err
	}
	// The generic server's gates are the libraries'; nginx-operator's own go to its storage.
	serverConfig.FeatureGate = o.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	codec, err := apiserver.StorageCodec(o.Recommended.Etcd.DefaultStorageMediaType, o.Recommended.Etcd.StorageConfig)
	if err != nil {
		return nil, err
	}
	o.Recommended.Etcd.StorageConfig.Codec = codec
	if err := o.Recommended.ApplyTo(serverConfig); err != nil {
		return nil, err
	}
	if delegated := serverConfig.Authorization.Authorizer; delegated != nil && o.ResourceWideAuthorization {
		serverConfig.Authorization.Authorizer = apiserver.ResourceWideFirst(delegated)
	}
	if pki != nil {
		file, err := apiserver.ApplyStandalone(serverConfig, pki, o.DataDir, o.Recommended.SecureServing.BindAddress, o.Recommended.SecureServing.BindPort)
		if err != nil {
			return nil, err
		}
		_, _ = fmt.Fprintf(o.Out, "Standalone mode: use KUBECONFIG=%s\n", file) // a hint on the terminal
	}
	return &apiserver.Config{GenericConfig: serverConfig, FeatureGate: o.ComponentGlobalsRegistry.FeatureGateFor(version.ComponentName)}, nil
}
