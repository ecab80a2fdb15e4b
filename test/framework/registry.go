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
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Registry is an OCI registry (distribution's, REGISTRY_BIN of make tools) serving HTTPS
// on loopback with a self-signed certificate, its storage in a directory of the test's.
type Registry struct {
	// Host is 127.0.0.1:<port>, the registry part of an image reference.
	Host string
	// CAFile holds the registry's certificate (PEM), which clients trust.
	CAFile string
	proc   *Process
}

// StartRegistry starts the registry binary with its data, certificate and log in dir
// and returns once /v2/ answers. A port taken between picking and binding (suites run
// side by side) means another start on another port.
func StartRegistry(binary, dir string) (*Registry, error) {
	cert, err := IssueCertificate(nil, "127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(dir, "registry.crt"), filepath.Join(dir, "registry.key")
	if err := WriteKeyPair(cert, certFile, keyFile); err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, err
	}
	roots.AddCert(leaf)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}

	var r *Registry
	err = RetryOnPortTaken(5, func(string, ...any) {}, func() error {
		port, err := FreePort()
		if err != nil {
			return err
		}
		r = &Registry{Host: fmt.Sprintf("127.0.0.1:%d", port), CAFile: certFile}
		config := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(config, []byte(fmt.Sprintf(`version: 0.1
log: {level: info, formatter: text}
storage:
  filesystem: {rootdirectory: %s}
  delete: {enabled: true}
http:
  addr: %s
  tls: {certificate: %s, key: %s}
`, filepath.Join(dir, "data"), r.Host, certFile, keyFile)), 0o644); err != nil {
			return err
		}
		if r.proc, err = StartProcess(filepath.Join(dir, fmt.Sprintf("registry-%d.log", port)), binary, "serve", config); err != nil {
			return err
		}
		err = r.proc.WaitUntil(time.Minute, 100*time.Millisecond, func() bool {
			resp, err := client.Get("https://" + r.Host + "/v2/")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		if err != nil {
			r.Stop()
			return fmt.Errorf("the registry did not answer /v2/: %w; log:\n%s", err, r.proc.Log())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Stop stops the registry by its PID and waits until it is gone.
func (r *Registry) Stop() { r.proc.Stop(os.Interrupt, 30*time.Second) }
