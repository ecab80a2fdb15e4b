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
	"encoding/pem"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// controllerMetricsSecret holds the controller's metrics serving certificate and its CA.
const controllerMetricsSecret = "nginx-operator-controller-metrics-tls"

// controllerMetricsNeedAnAuthorizedToken scrapes each controller pod's /metrics from this
// machine (the pod IP on the node's bridge) as Prometheus would through the ServiceMonitor:
// over TLS verified with the ca.crt of the metrics Secret for the Service's name, with the
// token of the shipped scraper identity. Without a token, or with one RBAC does not allow
// /metrics, the controller refuses and shows no metrics.
func controllerMetricsNeedAnAuthorizedToken(t *testing.T) {
	scraper := filepath.Join(stack.RepoRoot, "artifacts", "overlays", "components", "prometheus", "metrics-scraper.yaml")
	mustKubectl(t, "", "apply", "-f", scraper)
	t.Cleanup(func() { kubectl(t, "", "delete", "-f", scraper, "--ignore-not-found") })
	token := strings.TrimSpace(mustKubectl(t, "", "create", "token", "nginx-operator-metrics-scraper", "-n", systemNS, "--duration=10m"))
	stranger := strings.TrimSpace(mustKubectl(t, "", "create", "token", "default", "-n", "default", "--duration=10m"))
	issued := controllerMetricsSerial(t)

	pods := readyPods(t, systemNS, "app.kubernetes.io/name=nginx-operator-controller")
	if len(pods) != 2 {
		t.Fatalf("ready controller pods: %v, want 2", pods)
	}
	for _, pod := range pods {
		for _, c := range []struct {
			who, token string
			want       int
		}{{"no token", "", http.StatusUnauthorized}, {"the token of default/default", stranger, http.StatusForbidden}} {
			if code, body, _ := scrapeControllerPod(t, pod, c.token); code != c.want || strings.Contains(body, "controller_runtime_") {
				t.Errorf("%s with %s: %d %.200q, want %d and no metrics", pod, c.who, code, body, c.want)
			}
		}
		code, body, serial := scrapeControllerPod(t, pod, token)
		if code != http.StatusOK || !strings.Contains(body, "controller_runtime_") {
			t.Errorf("%s with the scraper's token: %d %.200q, want 200 and the controller's metrics", pod, code, body)
		}
		if serial != issued {
			t.Errorf("%s serves the certificate with serial %s, the Secret holds %s", pod, serial, issued)
		}
		t.Logf("%s: /metrics over TLS with the Secret's certificate (serial %s): no token 401, default/default 403, the scraper 200 (%d bytes)", pod, serial, len(body))
	}
}

// scrapeControllerPod GETs /metrics of a controller pod by its IP, verifying the served
// certificate with the metrics Secret's ca.crt for the Service's name, with bearer as the
// token ("" sends none). It returns the status code, the body and the served serial.
func scrapeControllerPod(t *testing.T, pod, bearer string) (int, string, string) {
	t.Helper()
	podIP := get(t, "get", "pod", "-n", systemNS, pod, "-o", "jsonpath={.status.podIP}")
	if ip := net.ParseIP(podIP); ip == nil || !localNet.Contains(ip) {
		t.Fatalf("pod %s has IP %q, not on the local node's network", pod, podIP)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secretData(t, controllerMetricsSecret, "ca.crt")) {
		t.Fatalf("no CA certificate in Secret %s", controllerMetricsSecret)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: "nginx-operator-controller." + systemNS + ".svc", MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	code, body, state, err := framework.GetWithToken(client, "https://"+net.JoinHostPort(podIP, "8443")+"/metrics", bearer)
	if err != nil {
		t.Fatalf("scraping %s: %v", pod, err)
	}
	return code, body, state.PeerCertificates[0].SerialNumber.String()
}

// controllerMetricsSerial returns the serial of the certificate in the metrics Secret.
func controllerMetricsSerial(t *testing.T) string {
	t.Helper()
	block, _ := pem.Decode(secretData(t, controllerMetricsSecret, "tls.crt"))
	if block == nil {
		t.Fatalf("no certificate in Secret %s", controllerMetricsSecret)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber.String()
}
