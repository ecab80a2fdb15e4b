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

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// httpClient trusts both the cluster CA and our apiserver's CA and presents the named
// client certificate from the local PKI ("" for none).
func httpClient(t *testing.T, cert string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	for _, ca := range []string{"ca.crt", "nginx-operator-ca.crt"} {
		data, err := os.ReadFile(pkiFile(ca))
		if err != nil {
			t.Fatal(err)
		}
		pool.AppendCertsFromPEM(data)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(pkiFile(cert+".crt"), pkiFile(cert+".key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func adminHTTPClient(t *testing.T) *http.Client { return httpClient(t, "admin") }

func kubeURL(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", ports["KUBE_APISERVER_PORT"], path)
}

func operatorURL(path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", ports["OPERATOR_APISERVER_PORT"], path)
}

// do sends a request and returns the status and body.
func do(t *testing.T, c *http.Client, method, url string, headers map[string]string, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data), resp.Header
}
