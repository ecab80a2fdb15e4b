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
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// The identity of artifacts/overlays/components/prometheus/metrics-scraper.yaml, which
// hack/local-up.sh applies: allowed to get /metrics and nothing else.
const (
	scraperNamespace   = "nginx-operator-system"
	scraperTokenSecret = "nginx-operator-metrics-scraper-token"
)

var scraper struct {
	sync.Mutex
	token string
}

// scraperToken returns the scraper's token, once kube-controller-manager has filled its Secret.
func scraperToken(t *testing.T) string {
	t.Helper()
	scraper.Lock()
	defer scraper.Unlock()
	if scraper.token != "" {
		return scraper.token
	}
	var encoded string
	waitFor(t, 3*time.Minute, "the token controller to fill the scraper's token Secret", func() bool {
		encoded = get(t, "get", "secret", "-n", scraperNamespace, scraperTokenSecret, "-o", "jsonpath={.data.token}")
		return encoded != ""
	})
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	scraper.token = string(decoded)
	return scraper.token
}

// scrapeController GETs the /metrics of the controller on port over HTTPS, verifying its
// certificate against the stack's nginx-operator CA, with token as the bearer token ("" sends
// none). It returns the status code and the body.
func scrapeController(t *testing.T, port int, token string) (int, string) {
	t.Helper()
	pem, err := os.ReadFile(pkiFile("nginx-operator-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in nginx-operator-ca.crt")
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer client.CloseIdleConnections()
	code, body, _, err := framework.GetWithToken(client, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), token)
	if err != nil {
		t.Fatalf("scraping the controller: %v", err)
	}
	return code, body
}
