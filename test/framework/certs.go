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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// The one certificate helper of the Go suites: a CA (NewCA), the certificates it signs
// (IssueCertificate, Cert.Issue) and their PEM files. hack/lib-certs.sh is the scripts'.

// NewCA returns a new self-signed certificate authority named commonName, with a P-256
// key, valid for an hour, for IssueCertificate.
func NewCA(commonName string) (tls.Certificate, error) {
	return Cert{CommonName: commonName, IsCA: true}.Issue(nil)
}

// IssueCertificate returns a certificate for commonName with a new P-256 key, valid for
// an hour, for the given extended key usages and IP addresses, signed by ca, or
// self-signed when ca is nil. Tests use it for identities the fixtures do not have.
func IssueCertificate(ca *tls.Certificate, commonName string, ips []net.IP, usages ...x509.ExtKeyUsage) (tls.Certificate, error) {
	return Cert{CommonName: commonName, IPs: ips, Usages: usages}.Issue(ca)
}

// Cert is what a certificate says, for what IssueCertificate's arguments do not cover.
type Cert struct {
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	Usages     []x509.ExtKeyUsage
	// Serial is the serial number; 0 picks a random one.
	Serial int64
	// IsCA makes a certificate authority, which signs certificates.
	IsCA bool
}

// Issue returns the certificate with a new P-256 key, valid for an hour, signed by ca, or
// self-signed when ca is nil.
func (c Cert) Issue(ca *tls.Certificate) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial := big.NewInt(c.Serial)
	if c.Serial == 0 {
		if serial, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
			return tls.Certificate{}, err
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: c.CommonName},
		DNSNames:     c.DNSNames,
		IPAddresses:  c.IPs,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  c.Usages,
	}
	if c.IsCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	parent, signer := tmpl, crypto.Signer(key)
	if ca != nil {
		if parent, err = x509.ParseCertificate(ca.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("parsing the CA certificate: %w", err)
		}
		var ok bool
		if signer, ok = ca.PrivateKey.(crypto.Signer); !ok {
			return tls.Certificate{}, fmt.Errorf("the CA key %T cannot sign", ca.PrivateKey)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// CertPEM is the certificate of cert in PEM.
func CertPEM(cert tls.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
}

// KeyPEM is the private key of cert in PEM (PKCS #8).
func KeyPEM(cert tls.Certificate) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// WriteKeyPair writes cert to certFile and its key to keyFile (0600), both PEM, as a
// server's --tls-cert-file and --tls-private-key-file read them.
func WriteKeyPair(cert tls.Certificate, certFile, keyFile string) error {
	key, err := KeyPEM(cert)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, CertPEM(cert), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, key, 0o600)
}
