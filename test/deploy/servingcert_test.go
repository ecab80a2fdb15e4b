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

package deploy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net"
	"testing"
	"time"
)

// servingCertificate returns the APIServices' caBundle and the serial number of the
// certificate in the apiserver's serving Secret.
func servingCertificate(t *testing.T) (caBundle, serial string) {
	t.Helper()
	caBundle = get(t, "get", "apiservice", "v1alpha2.operator.example.com", "-o", "jsonpath={.spec.caBundle}")
	data, err := base64.StdEncoding.DecodeString(get(t, "get", "secret", "-n", systemNS, "nginx-operator-apiserver-tls", "-o", `jsonpath={.data.tls\.crt}`))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("the serving Secret holds no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return caBundle, cert.SerialNumber.String()
}

// servedCertificate returns the serial number of the certificate the apiserver Service
// serves, or "" unless caBundle verifies it for the Service's name, as kube-apiserver does.
func servedCertificate(t *testing.T, caBundle string) string {
	t.Helper()
	clusterIP := get(t, "get", "service", "-n", systemNS, "nginx-operator-apiserver", "-o", "jsonpath={.spec.clusterIP}")
	if ip := net.ParseIP(clusterIP); ip == nil || !serviceNet.Contains(ip) {
		t.Fatalf("the apiserver Service's address %q is not in the local Service range", clusterIP)
	}
	bundle, err := base64.StdEncoding.DecodeString(caBundle)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(clusterIP, "443"), &tls.Config{
		RootCAs: roots, ServerName: "nginx-operator-apiserver." + systemNS + ".svc",
	})
	if err != nil {
		return ""
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}
