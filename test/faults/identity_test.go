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

package faults

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"path/filepath"

	"k8s.io/client-go/rest"

	"github.com/example/nginx-operator/test/framework"
)

// unprivilegedClient authenticates to s as userName with a client certificate issued
// from the standalone CA in its data directory, in no group: a user the server knows
// but has not made a member of system:masters.
func (s *apiserver) unprivilegedClient(userName string) *http.Client {
	t := s.t
	t.Helper()
	pki := filepath.Join(s.DataDir, "pki")
	ca, err := tls.LoadX509KeyPair(filepath.Join(pki, "ca.crt"), filepath.Join(pki, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := framework.IssueCertificate(&ca, userName, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := framework.KeyPEM(leaf)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(s.Config)
	cfg.CertData = framework.CertPEM(leaf)
	cfg.KeyData = keyPEM
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
