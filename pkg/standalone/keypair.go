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

package standalone

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// certValidity is long because standalone certificates are for local use and are
// reused across restarts so that a written kubeconfig keeps working.
const certValidity = 5 * 365 * 24 * time.Hour

// keyPair is a certificate and its key, PEM-encoded on disk.
type keyPair struct {
	CertFile, KeyFile string
	cert              *x509.Certificate
	key               crypto.Signer
}

// loadOrCreateCA returns the CA under dir, creating it on first use.
func loadOrCreateCA(dir, name string) (*keyPair, error) {
	kp := &keyPair{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if loaded, err := kp.load(); err != nil || loaded {
		return kp, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caCert, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "nginx-operator-standalone-ca"}, key)
	if err != nil {
		return nil, err
	}
	kp.cert, kp.key = caCert, key
	return kp, kp.write()
}

// loadOrIssue returns the leaf under dir, issuing it from ca on first use.
func loadOrIssue(ca *keyPair, dir, name string, tmpl x509.Certificate) (*keyPair, error) {
	kp := &keyPair{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if loaded, err := kp.load(); err != nil || loaded {
		return kp, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-time.Minute)
	tmpl.NotAfter = now.Add(certValidity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, err
	}
	if kp.cert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	kp.key = key
	return kp, kp.write()
}

// servingCertTemplate covers localhost and, when it is a specific address, the address
// the server binds to, which is what the standalone kubeconfig points at.
func servingCertTemplate(bindIP net.IP) x509.Certificate {
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	if bindIP != nil && !bindIP.IsUnspecified() && !bindIP.IsLoopback() {
		ips = append(ips, bindIP)
	}
	return x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
}

func clientCertTemplate(user string, groups ...string) x509.Certificate {
	return x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

func (kp *keyPair) load() (bool, error) {
	if _, err := os.Stat(kp.CertFile); os.IsNotExist(err) {
		return false, nil
	}
	certs, err := cert.CertsFromFile(kp.CertFile)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", kp.CertFile, err)
	}
	key, err := keyutil.PrivateKeyFromFile(kp.KeyFile)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", kp.KeyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return false, fmt.Errorf("%s does not hold a signing key", kp.KeyFile)
	}
	kp.cert, kp.key = certs[0], signer
	return true, nil
}

func (kp *keyPair) write() error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(kp.key)
	if err != nil {
		return err
	}
	if err := keyutil.WriteKey(kp.KeyFile, keyPEM); err != nil {
		return err
	}
	certPEM, err := kp.certPEM()
	if err != nil {
		return err
	}
	return cert.WriteCert(kp.CertFile, certPEM)
}

// certPEM returns the PEM encoding of the certificate.
func (kp *keyPair) certPEM() ([]byte, error) { return cert.EncodeCertificates(kp.cert) }
