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

package framework

import (
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"testing"
)

func TestCertificatesOfANewCAVerifyAndTheirFilesLoad(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := Cert{CommonName: "site", DNSNames: []string{"site.example"}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, Serial: 2}.Issue(&ca)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := WriteKeyPair(leaf, certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	loaded, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(loaded.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(CertPEM(ca)) {
		t.Fatal("the CA's PEM holds no certificate")
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "site.example", Roots: roots}); err != nil {
		t.Errorf("the issued certificate does not verify with its CA: %v", err)
	}
	if cert.SerialNumber.Int64() != 2 {
		t.Errorf("serial %v, want 2", cert.SerialNumber)
	}
	client, err := IssueCertificate(&ca, "someone", nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := x509.ParseCertificate(client.Certificate[0])
	if _, err := parsed.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || parsed.Subject.CommonName != "someone" {
		t.Errorf("client certificate %q: %v", parsed.Subject.CommonName, err)
	}
}
