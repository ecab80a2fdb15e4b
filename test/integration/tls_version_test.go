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

package integration

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestServesTLS12AndUp checks the apiserver's default minimum TLS version (no
// --tls-min-version, as artifacts/deploy runs it): TLS 1.0 and 1.1 handshakes are refused,
// 1.2 and 1.3 complete.
func TestServesTLS12AndUp(t *testing.T) {
	s := sharedServer(t)
	// The admin kubeconfig's CA and client certificate: a TLS 1.2+ handshake completes.
	base, err := rest.TLSConfigFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", s.Port)
	for _, tc := range []struct {
		name    string
		version uint16
		refused bool
	}{
		{"TLS 1.0", tls.VersionTLS10, true},
		{"TLS 1.1", tls.VersionTLS11, true},
		{"TLS 1.2", tls.VersionTLS12, false},
		{"TLS 1.3", tls.VersionTLS13, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base.Clone()
			cfg.MinVersion, cfg.MaxVersion = tc.version, tc.version
			state, err := handshake(addr, cfg)
			switch {
			case tc.refused && err == nil:
				t.Errorf("the apiserver completed a %s handshake (cipher %s)", tc.name, tls.CipherSuiteName(state.CipherSuite))
			case tc.refused && !strings.Contains(err.Error(), "protocol version"):
				t.Errorf("%s failed, but not for its version: %v", tc.name, err)
			case tc.refused:
				t.Logf("%s refused: %v", tc.name, err)
			case err != nil:
				t.Errorf("%s handshake: %v", tc.name, err)
			default:
				t.Logf("%s accepted, cipher %s", tc.name, tls.CipherSuiteName(state.CipherSuite))
			}
		})
	}
}

// TestOldTLSClientWorksAgainstAnOldServer shows that the refusals above are the
// apiserver's: the same client settings complete TLS 1.0 and 1.1 handshakes with a server
// that allows them.
func TestOldTLSClientWorksAgainstAnOldServer(t *testing.T) {
	old := httptest.NewUnstartedServer(nil)
	old.TLS = &tls.Config{MinVersion: tls.VersionTLS10}
	old.StartTLS()
	defer old.Close()
	roots := x509.NewCertPool()
	roots.AddCert(old.Certificate())
	for _, version := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		state, err := handshake(old.Listener.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: version, MaxVersion: version})
		if err != nil {
			t.Fatalf("%s against a server that allows it: %v", tls.VersionName(version), err)
		}
		t.Logf("%s handshake with a permissive server: cipher %s", tls.VersionName(version), tls.CipherSuiteName(state.CipherSuite))
	}
}

// handshake dials addr and completes a TLS handshake with cfg.
func handshake(addr string, cfg *tls.Config) (tls.ConnectionState, error) {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(dialer, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.ConnectionState(), nil
}
