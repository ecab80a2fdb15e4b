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

// Package standalone lets the apiserver serve without a kube-apiserver: it keeps a
// small PKI under the data directory (a CA, a serving certificate and an admin client
// certificate), accepts client certificates from that CA only, authorizes only
// system:masters and writes an admin kubeconfig.
package standalone

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/apiserver/pkg/authentication/user"
)

// PKI is what standalone mode keeps under <data-dir>/pki: a CA, a serving certificate
// for localhost (and the bind address) and an admin client certificate in system:masters.
type PKI struct {
	ca, serving, admin *keyPair
}

// ServingCertFile is the serving certificate, PEM-encoded.
func (p *PKI) ServingCertFile() string { return p.serving.CertFile }

// ServingKeyFile is the key of ServingCertFile.
func (p *PKI) ServingKeyFile() string { return p.serving.KeyFile }

// LoadOrCreatePKI reuses the PKI under dataDir/pki, creating what is missing, so that
// a written kubeconfig keeps working across restarts. bindIP is the --bind-address.
func LoadOrCreatePKI(dataDir string, bindIP net.IP) (*PKI, error) {
	dir := filepath.Join(dataDir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := loadOrCreateCA(dir, "ca")
	if err != nil {
		return nil, fmt.Errorf("standalone CA: %w", err)
	}
	serving, err := loadOrIssue(ca, dir, "apiserver", servingCertTemplate(bindIP))
	if err != nil {
		return nil, fmt.Errorf("standalone serving certificate: %w", err)
	}
	// A certificate from an earlier run with another --bind-address, or from another CA,
	// is replaced rather than served to clients that cannot verify it.
	if host := kubeconfigHost(bindIP); serving.cert.VerifyHostname(host) != nil || serving.cert.CheckSignatureFrom(ca.cert) != nil {
		if err := os.Remove(serving.CertFile); err != nil {
			return nil, err
		}
		if serving, err = loadOrIssue(ca, dir, "apiserver", servingCertTemplate(bindIP)); err != nil {
			return nil, fmt.Errorf("standalone serving certificate: %w", err)
		}
	}
	admin, err := loadOrIssue(ca, dir, "admin", clientCertTemplate("admin", user.SystemPrivilegedGroup))
	if err != nil {
		return nil, fmt.Errorf("standalone admin certificate: %w", err)
	}
	return &PKI{ca: ca, serving: serving, admin: admin}, nil
}
