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
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// nginxConf is an nginx.conf for the default (unprivileged) image: port 8080, files in
// /tmp, a /healthz location; extra goes into the server block.
func nginxConf(extra string) string {
	return `pid /tmp/nginx.pid;
events {}
http {
  client_body_temp_path /tmp/client_temp;
  proxy_temp_path /tmp/proxy_temp;
  fastcgi_temp_path /tmp/fastcgi_temp;
  uwsgi_temp_path /tmp/uwsgi_temp;
  scgi_temp_path /tmp/scgi_temp;
  include /etc/nginx/mime.types;
  access_log off;
  server {
    listen 8080;
    root /usr/share/nginx/html;
    location = /healthz { return 200 "ok\n"; }
    ` + extra + `
  }
}`
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

// indent prefixes every line of s, for a block scalar in a YAML manifest.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// operandOptions runs NginxOperators that use what a real site needs, each in parallel:
// the default image in a namespace enforcing the restricted Pod Security standard, new
// content and a rejected configuration reloaded in place under a client loop (the rollout
// is measured beside it, reload_test.go), TLS served and rotated, and pods that cannot run
// explained in status.
//
// The four run at once from goroutines rather than as parallel subtests, which go test
// would run only GOMAXPROCS at a time: most of their time is waiting.
func operandOptions(t *testing.T) {
	var wg sync.WaitGroup
	for _, part := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"the default passes the restricted Pod Security standard", restrictedDefault},
		{"new content reloads in place; a configuration nginx rejects never serves", contentReloadsInPlace},
		{"TLS is served only for a writer who may read its Secret, and a rotated certificate replaces it", tlsRotates},
		{"pods that cannot run are explained in status, and recover", failuresReachStatus},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(part.name, part.run)
		}()
	}
	wg.Wait()
}

func restrictedDefault(t *testing.T) {
	const ns = "restricted-web"
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--wait=false") })
	mustKubectl(t, `apiVersion: v1
kind: Namespace
metadata:
  name: restricted-web
  labels: {pod-security.kubernetes.io/enforce: restricted, pod-security.kubernetes.io/enforce-version: latest}
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: web, namespace: restricted-web}
spec: {replicas: 1}
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: stock, namespace: restricted-web}
spec: {image: "nginx:1.27.4"}
`, "apply", "-f", "-")
	start := time.Now()
	mustKubectl(t, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=180s", "ngx/web")
	t.Logf("the default NginxOperator Ready in the restricted namespace after %s", time.Since(start).Round(100*time.Millisecond))
	if got := get(t, "get", "ngx", "-n", ns, "web", "-o", "jsonpath={.spec.image} {.spec.ports[0].containerPort} {.spec.service.ports[0].port}"); got != "nginxinc/nginx-unprivileged:1.27.4 8080 80" {
		t.Errorf("defaults: %q", got)
	}
	pod := get(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance=web", "-o",
		`jsonpath={.items[0].spec.securityContext.runAsNonRoot} {.items[0].spec.securityContext.seccompProfile.type} {.items[0].spec.containers[0].securityContext.allowPrivilegeEscalation} {.items[0].spec.containers[0].securityContext.capabilities.drop}`)
	if pod != `true RuntimeDefault false ["ALL"]` {
		t.Errorf("pod security contexts: %q", pod)
	}
	clusterIP := get(t, "get", "service", "-n", ns, "web", "-o", "jsonpath={.spec.clusterIP}")
	t.Logf("welcome page through the Service on port 80 after %s", waitForWelcome(t, clusterIP+":80").Round(100*time.Millisecond))

	// The stock image runs as root. Its pods get the restricted profile all the same, so Pod
	// Security admits them; the kubelet refuses to start a root image under runAsNonRoot,
	// and status says so.
	waitFor(t, 2*time.Minute, "the kubelet's refusal of the stock nginx in status", func() bool {
		got := get(t, "get", "ngx", "-n", ns, "stock", "-o", `jsonpath={.status.conditions[?(@.type=="Stalled")].reason}|{.status.conditions[?(@.type=="Stalled")].message}`)
		reason, msg, _ := strings.Cut(got, "|")
		return reason == "ContainerConfigFailed" && strings.Contains(msg, "runAsNonRoot")
	})
	t.Logf("stock nginx: %s", get(t, "get", "ngx", "-n", ns, "stock", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}: {.status.conditions[?(@.type=="Ready")].message}`))
}

// certificate returns a serving certificate for name with the given serial, signed by
// ca, as PEM.
func certificate(t *testing.T, ca *tls.Certificate, name string, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	cert, err := framework.Cert{CommonName: name, DNSNames: []string{name}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, Serial: serial}.Issue(ca)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err = framework.KeyPEM(cert)
	if err != nil {
		t.Fatal(err)
	}
	return framework.CertPEM(cert), keyPEM
}

func tlsRotates(t *testing.T) {
	t.Cleanup(func() {
		kubectl(t, "", "delete", "ngx", "site-tls", "--ignore-not-found")
		kubectl(t, "", "delete", "secret", "site-tls", "--ignore-not-found")
	})
	ca, err := framework.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(framework.CertPEM(ca))
	const name = "site-tls.default.svc"
	secret := func(serial int64) string {
		cert, key := certificate(t, &ca, name, serial)
		return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: site-tls, namespace: default}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
`, b64(cert), b64(key))
	}
	mustKubectl(t, secret(1), "apply", "-f", "-")
	writerReadsOnlyWhatItMay(t, "site-tls", `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: site-tls, namespace: default}
spec:
  tls: [{secretName: site-tls}]
  config:
    inline: |
`+indent(nginxConf(`listen 8443 ssl;
    ssl_certificate /etc/nginx/tls/site-tls/tls.crt;
    ssl_certificate_key /etc/nginx/tls/site-tls/tls.key;`), "      ")+"\n")
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=180s", "ngx/site-tls")
	if got := get(t, "get", "service", "site-tls", "-o", "jsonpath={.spec.ports[*].name}:{.spec.ports[*].port}"); got != "http https:80 443" {
		t.Errorf("Service ports: %q, want http 80 and https 443", got)
	}
	clusterIP := get(t, "get", "service", "site-tls", "-o", "jsonpath={.spec.clusterIP}")
	if !serviceNet.Contains(net.ParseIP(clusterIP)) {
		t.Fatalf("ClusterIP %q is not in the local Service range", clusterIP)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: name}}}
	served := func() int64 {
		resp, err := client.Get("https://" + clusterIP + ":443/healthz")
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 {
			return -1
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	waitFor(t, 3*time.Minute, "HTTPS with certificate 1, verified by the CA", func() bool { return served() == 1 })
	rotated := time.Now()
	mustKubectl(t, secret(2), "apply", "-f", "-")
	waitFor(t, 3*time.Minute, "the rotated certificate 2 served", func() bool { return served() == 2 })
	t.Logf("HTTPS served certificate 1; the Secret's renewal to certificate 2 was served %s later", time.Since(rotated).Round(100*time.Millisecond))
}

func failuresReachStatus(t *testing.T) {
	names := []string{"fail-pull", "fail-crash", "fail-ready", "fail-sched"}
	t.Cleanup(func() { kubectl(t, "", append([]string{"delete", "ngx", "--ignore-not-found"}, names...)...) })
	mustKubectl(t, `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: fail-pull, namespace: default}
spec: {image: "127.0.0.1:1/none:1"}
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: fail-crash, namespace: default}
spec:
  config: {inline: "events {}\nhttp { lisen 8080; }\n"}
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: fail-ready, namespace: default}
spec: {healthcheckPath: /missing}
---
apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: fail-sched, namespace: default}
spec: {resources: {requests: {cpu: "5000"}}}
`, "apply", "-f", "-")
	// A crash is told by its exit code, never by nginx's output, which only readers of the
	// pod's logs may see.
	want := map[string]struct{ reason, message, never string }{
		"fail-pull":  {"ImagePullFailed", "127.0.0.1:1/none:1", ""},
		"fail-crash": {"ContainerCrashing", "last exit code 1", "lisen"},
		"fail-ready": {"ContainerNotReady", "without passing its readiness probe", ""},
		"fail-sched": {"PodsUnschedulable", "Insufficient cpu", ""},
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := want[name]
			var last string
			var parts []string
			if !framework.Poll(3*time.Minute, 2*time.Second, func() bool {
				last, _, _ = kubectl(t, "", "get", "ngx", name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}|{.status.conditions[?(@.type=="Ready")].message}|{.status.conditions[?(@.type=="Stalled")].status}`)
				parts = strings.SplitN(last, "|", 3)
				return len(parts) == 3 && parts[0] == w.reason && strings.Contains(parts[1], w.message) && parts[2] == "True"
			}) {
				t.Errorf("%s: status never said %s (%q); last: %q", name, w.reason, w.message, last)
				return
			}
			if w.never != "" && strings.Contains(parts[1], w.never) {
				t.Errorf("%s: status quotes the pod's output %q: %s", name, w.never, parts[1])
			}
			t.Logf("%s: Ready False, Stalled True after %s: %s: %s", name, time.Since(start).Round(time.Second), parts[0], parts[1])
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, name := range names {
		events := get(t, "get", "events", "--field-selector", "involvedObject.name="+name+",type=Warning", "-o", "jsonpath={range .items[*]}{.reason} {end}")
		if !strings.Contains(events, want[name].reason) {
			t.Errorf("%s: Warning events %q lack %s", name, events, want[name].reason)
		}
	}
	// Fixed, each becomes Ready. fail-pull goes back to the default image: without image,
	// ports and service, defaulting gives the unprivileged one on 8080 (a root image would
	// not start under the restricted defaults).
	mustKubectl(t, "", "patch", "ngx", "fail-pull", "--type=merge", "-p", `{"spec":{"image":null,"ports":null,"service":null}}`)
	mustKubectl(t, "", "patch", "ngx", "fail-crash", "--type=json", "-p", `[{"op":"remove","path":"/spec/config"}]`)
	mustKubectl(t, "", "patch", "ngx", "fail-ready", "--type=merge", "-p", `{"spec":{"healthcheckPath":"/"}}`)
	mustKubectl(t, "", "patch", "ngx", "fail-sched", "--type=merge", "-p", `{"spec":{"resources":{"requests":{"cpu":"10m"}}}}`)
	fixed := time.Now()
	mustKubectl(t, "", append([]string{"wait", "--for=condition=Ready", "--timeout=180s", "ngx"}, names...)...)
	t.Logf("all four Ready %s after their fixes", time.Since(fixed).Round(time.Second))
}
