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
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/example/nginx-operator/test/framework"
)

// etcdName is the name etcd's serving certificate is for (the apiserver's --etcd-servers).
const etcdName = "nginx-operator-etcd-0.nginx-operator-etcd.nginx-operator-system.svc"

// etcdAdmitsOnlyTheAPIServer talks to the etcd pod from this machine (its pod IP on the
// node's bridge, local and behind the guards). On each TLS port, first a certificate etcd
// must admit completes an exchange (the port listens, and this client accepts etcd's
// certificate); then plaintext gets no data, and TLS without a certificate or with one
// from another CA is refused by etcd's own TLS alert. The apiserver's client certificate
// reads the operator's keys. The metrics port serves health, not data.
func etcdAdmitsOnlyTheAPIServer(t *testing.T) {
	podIP := get(t, "get", "pod", "-n", systemNS, "nginx-operator-etcd-0", "-o", "jsonpath={.status.podIP}")
	if ip := net.ParseIP(podIP); ip == nil || !localNet.Contains(ip) {
		t.Fatalf("etcd's pod IP %q is not on the local node's network", podIP)
	}
	client := secretKeyPair(t, "nginx-operator-etcd-client-tls")
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secretData(t, "nginx-operator-etcd-client-tls", "ca.crt")) {
		t.Fatal("no etcd CA in nginx-operator-etcd-client-tls")
	}
	stranger := selfSignedClientCert(t)
	rangeAll := `{"key":"` + base64.StdEncoding.EncodeToString([]byte("/registry/operator.example.com/")) +
		`","range_end":"` + base64.StdEncoding.EncodeToString([]byte("/registry/operator.example.com0")) + `","count_only":true}`

	// Which certificate etcd admits from this host on which port: the apiserver's on the
	// client port; on the peer port, where etcd also requires the certificate's SANs to name
	// the address the connection comes from, one of the etcd CA for this host's address.
	hostIP := sourceIP(t, net.JoinHostPort(podIP, "2381"))
	admitted := map[string]tls.Certificate{"2379": client, "2380": etcdCAIssued(t, hostIP)}
	for _, port := range []string{"2379", "2380"} {
		addr := net.JoinHostPort(podIP, port)
		// Positive control: both ports serve /version to a certificate etcd trusts.
		code, body, err := etcdRequest(tlsClient(roots, []tls.Certificate{admitted[port]}), "https://"+addr+"/version", "")
		if err != nil || code != http.StatusOK || !strings.Contains(body, "etcdserver") {
			t.Errorf("port %s with the certificate etcd trusts: %s, want its /version", port, describe(code, body, err))
			continue
		}
		t.Logf("port %s admits its certificate: /version %s", port, strings.TrimSpace(body))
		if port == "2380" {
			// The peer Secret's certificate is for the pods' names, not this host: etcd's TLS
			// accepts it (no alert), then its SAN check closes the connection.
			err := tlsExchange(addr, roots, []tls.Certificate{secretKeyPair(t, "nginx-operator-etcd-peer-tls")})
			if alert := serverAlert(err); alert != "" || !errors.Is(err, io.EOF) {
				t.Errorf("the peer certificate from %s on 2380: %v, want the handshake done and the connection closed (EOF)", hostIP, err)
			} else {
				t.Logf("the peer certificate from %s on port 2380: handshake done, then closed by etcd's SAN check (%v)", hostIP, err)
			}
		}

		// The check below tells etcd's alert from this client's own refusal: a client that
		// does not trust etcd's CA fails the handshake itself, with no alert from etcd.
		if err := tlsExchange(addr, x509.NewCertPool(), []tls.Certificate{admitted[port]}); err == nil || serverAlert(err) != "" {
			t.Errorf("port %s, a client without the etcd CA: %v, want its own verification error", port, err)
		}

		// Plain HTTP: the TLS listener answers with an error or closes, never with data.
		if answer, err := plaintextExchange(addr, rangeAll); err != nil && strings.HasPrefix(err.Error(), "dial") {
			t.Errorf("plaintext on %s: %v", port, err)
		} else if strings.HasPrefix(answer, "HTTP/1.1 200") || strings.Contains(answer, `"count"`) {
			t.Errorf("plaintext on %s answered: %s", port, answer)
		} else {
			t.Logf("plaintext on port %s refused: %q %v", port, firstLine(answer), err)
		}

		// Go's TLS server (etcd) says "certificate required" for a missing certificate under
		// TLS 1.3 and "bad certificate" under 1.2; "unknown certificate authority" for one it
		// cannot verify (older Go: "bad certificate").
		for _, tc := range []struct {
			name   string
			certs  []tls.Certificate
			alerts []string
		}{
			{"TLS without a client certificate", nil, []string{"tls: certificate required", "tls: bad certificate"}},
			{"TLS with a certificate of another CA", []tls.Certificate{stranger}, []string{"tls: unknown certificate authority", "tls: bad certificate"}},
		} {
			err := tlsExchange(addr, roots, tc.certs)
			alert := serverAlert(err)
			if !slices.Contains(tc.alerts, alert) {
				t.Errorf("%s on %s: %v, want etcd's alert, one of %q", tc.name, port, err, tc.alerts)
			} else {
				t.Logf("%s on port %s refused by etcd: %v", tc.name, port, err)
			}
		}
	}

	// The apiserver's certificate is let in and sees the operator's keys, this one among them.
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "in-etcd", "--ignore-not-found") })
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: in-etcd, namespace: default}\nspec: {replicas: 0}\n", "create", "-f", "-")
	code, body, err := etcdRequest(tlsClient(roots, []tls.Certificate{client}), "https://"+net.JoinHostPort(podIP, "2379")+"/v3/kv/range", rangeAll)
	var count struct{ Count string }
	if err != nil || code != http.StatusOK || json.Unmarshal([]byte(body), &count) != nil {
		t.Fatalf("the apiserver's client certificate: %s", describe(code, body, err))
	}
	if count.Count == "" || count.Count == "0" {
		t.Errorf("with the apiserver's client certificate: no keys under /registry/operator.example.com/ (%s)", body)
	}
	t.Logf("with the apiserver's client certificate: %s keys under /registry/operator.example.com/", count.Count)

	// The kubelet's probes use the plain metrics listener: health only, no key-value API.
	plain := &http.Client{Timeout: 10 * time.Second}
	if code, body, err := etcdRequest(plain, "http://"+net.JoinHostPort(podIP, "2381")+"/health", ""); err != nil || code != http.StatusOK {
		t.Errorf("metrics port /health: %s", describe(code, body, err))
	}
	if code, body, err := etcdRequest(plain, "http://"+net.JoinHostPort(podIP, "2381")+"/v3/kv/range", rangeAll); err == nil && code == http.StatusOK {
		t.Errorf("the metrics port serves the key-value API: %d %s", code, body)
	}
}

// etcdNetworkPolicyAdmitsOnlyTheAPIServer checks the NetworkPolicy against the pods that
// run: it selects the etcd pod, and admits the apiserver pods to the client port, etcd to
// the peer port and nobody else. The test node's bridge CNI does not enforce NetworkPolicy,
// so this is checked on the object, not with traffic.
func etcdNetworkPolicyAdmitsOnlyTheAPIServer(t *testing.T) {
	var policy networkingv1.NetworkPolicy
	if err := json.Unmarshal([]byte(get(t, "get", "networkpolicy", "-n", systemNS, "nginx-operator-etcd", "-o", "json")), &policy); err != nil {
		t.Fatal(err)
	}
	selector, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if len(policy.Spec.PolicyTypes) != 1 || policy.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("policyTypes %v, want [Ingress]", policy.Spec.PolicyTypes)
	}
	// Which pods of the cluster may reach the etcd pods on which port.
	var pods struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(get(t, "get", "pods", "-A", "-o", "json")), &pods); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"nginx-operator-apiserver": "2379", "nginx-operator-etcd": "2380",
		"nginx-operator-etcd-defrag": "2379", "nginx-operator-etcd-backup": "2379"}
	selected := 0
	for _, pod := range pods.Items {
		m := pod.Metadata
		if m.Namespace == systemNS && selector.Matches(labels.Set(m.Labels)) {
			selected++
		}
		var allowed []string
		for _, rule := range policy.Spec.Ingress {
			if admits(t, rule, m.Namespace, m.Labels) {
				for _, p := range rule.Ports {
					if p.Port == nil {
						allowed = append(allowed, "every port")
					} else {
						allowed = append(allowed, p.Port.String())
					}
				}
				if len(rule.Ports) == 0 {
					allowed = append(allowed, "every port")
				}
			}
		}
		got := strings.Join(allowed, ",")
		if expected := want[m.Labels["app.kubernetes.io/name"]]; m.Namespace != systemNS && got != "" || m.Namespace == systemNS && got != expected {
			t.Errorf("pod %s/%s may reach etcd on %q, want %q", m.Namespace, m.Name, got, expected)
		}
		t.Logf("pod %s/%s may reach etcd on ports %q", m.Namespace, m.Name, got)
	}
	if selected != 3 {
		t.Errorf("the NetworkPolicy selects %d pods of %s, want the 3 etcd pods", selected, systemNS)
	}
	if !selector.Matches(labels.Set{"app.kubernetes.io/name": "nginx-operator-etcd"}) || selector.Matches(labels.Set{"app.kubernetes.io/name": "nginx-operator-apiserver"}) {
		t.Errorf("podSelector %s does not select exactly the etcd pods", selector)
	}
}

// servingPortsOnly checks the NetworkPolicies of the apiserver and the controller: each
// selects exactly its own Ready pods and opens only the port it serves on (the apiserver's
// HTTPS port to the aggregator and Prometheus, the controller's metrics port), to any source.
func servingPortsOnly(t *testing.T) {
	for name, port := range map[string]int32{"nginx-operator-apiserver": 8443, "nginx-operator-controller": 8443} {
		var policy networkingv1.NetworkPolicy
		if err := json.Unmarshal([]byte(get(t, "get", "networkpolicy", "-n", systemNS, name, "-o", "json")), &policy); err != nil {
			t.Fatalf("NetworkPolicy %s: %v", name, err)
		}
		selector, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		selected := get(t, "get", "pods", "-n", systemNS, "-l", selector.String(), "-o", "name")
		if pods := readyPods(t, systemNS, "app.kubernetes.io/name="+name); strings.Count(selected, "\n") != len(pods) || len(pods) != 2 {
			t.Errorf("NetworkPolicy %s selects %q; the %s pods are %v", name, selected, name, pods)
		}
		var open []string
		for _, rule := range policy.Spec.Ingress {
			for _, p := range rule.Ports {
				open = append(open, p.Port.String())
			}
			if len(rule.Ports) == 0 {
				open = append(open, "every port")
			}
		}
		if len(policy.Spec.PolicyTypes) != 1 || policy.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress || strings.Join(open, ",") != fmt.Sprint(port) {
			t.Errorf("NetworkPolicy %s: policyTypes %v, open ports %v; want Ingress and %d only", name, policy.Spec.PolicyTypes, open, port)
		}
		t.Logf("NetworkPolicy %s: ports %v open to any source, every other port closed", name, open)
	}
}

// admits reports whether an ingress rule lets a pod with these labels in namespace in: a
// podSelector alone means the policy's namespace; ipBlocks and namespaceSelectors would let
// more in and are reported.
func admits(t *testing.T, rule networkingv1.NetworkPolicyIngressRule, namespace string, podLabels map[string]string) bool {
	t.Helper()
	if len(rule.From) == 0 {
		t.Errorf("an ingress rule without from admits everyone: %+v", rule)
		return true
	}
	for _, peer := range rule.From {
		if peer.IPBlock != nil || peer.NamespaceSelector != nil || peer.PodSelector == nil {
			t.Errorf("an ingress peer reaches beyond the namespace's pods: %+v", peer)
			return true
		}
		s, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		if namespace == systemNS && s.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}

// auditLogRecordsTheCreate creates an NginxOperator through the kube-apiserver and finds
// its create event, with the body sent, and its get, at Metadata level, both by the user
// who sent them, in the audit log the apiserver pods write to stdout (kubectl logs).
func auditLogRecordsTheCreate(t *testing.T) {
	marker := fmt.Sprintf("audit-%d", time.Now().UnixNano())
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "audited", "--ignore-not-found") })
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: audited, namespace: default}\nspec: {replicas: 0, forceRedeploy: "+marker+"}\n", "create", "-f", "-")
	mustKubectl(t, "", "get", "ngx", "audited")
	type event struct {
		Kind, Level, Verb, Stage string
		User                     struct{ Username string }
		ObjectRef                *struct{ Resource, Name string }
		RequestObject            json.RawMessage
		ResponseObject           json.RawMessage
	}
	// The requests come through the aggregator: their events must name the user kubectl is,
	// from the front-proxy headers, not the kube-apiserver's front-proxy client certificate.
	// Others read the object too (the garbage collector's graph builder does), so the get
	// looked for is the one by this user.
	user := get(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	var create, read *event
	var readers []string
	lines := 0
	waitFor(t, 2*time.Minute, "the create and the get by "+user+" in the apiservers' audit log", func() bool {
		out, _, err := kubectl(t, "", "logs", "-n", systemNS, "-l", apiserverSelector, "--tail=-1", "-c", "apiserver")
		if err != nil {
			return false
		}
		create, read, readers, lines = nil, nil, nil, 0
		for _, line := range strings.Split(out, "\n") {
			var e event
			if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil || e.Kind != "Event" {
				continue
			}
			lines++
			if e.ObjectRef == nil || e.ObjectRef.Resource != "nginxoperators" || e.ObjectRef.Name != "audited" || e.Stage != "ResponseComplete" {
				continue
			}
			switch e.Verb {
			case "create":
				if bytes.Contains(e.RequestObject, []byte(marker)) {
					create = &e
				}
			case "get":
				readers = append(readers, e.User.Username)
				if e.User.Username == user {
					read = &e
				}
			}
		}
		return create != nil && read != nil
	})
	t.Logf("%d audit events in the apiserver pods' logs; create by %q at %s, get at %s; gets by %q", lines, create.User.Username, create.Level, read.Level, readers)
	if create.User.Username != user {
		t.Errorf("create audited as %q, want the requesting user %q", create.User.Username, user)
	}
	if create.Level != "Request" || len(create.ResponseObject) != 0 {
		t.Errorf("create audited at %s with a response body %t, want Request without", create.Level, len(create.ResponseObject) != 0)
	}
	if read.Level != "Metadata" || len(read.RequestObject) != 0 || len(read.ResponseObject) != 0 {
		t.Errorf("get audited at %s, want Metadata without bodies", read.Level)
	}
}

// etcdRequest POSTs body (GETs without one) and returns the status and body.
func etcdRequest(c *http.Client, url, body string) (int, string, error) {
	method, reader := http.MethodGet, io.Reader(nil)
	if body != "" {
		method, reader = http.MethodPost, strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, reader)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(data), err
}

// tlsClient verifies etcd's certificate for its Service name (dialed by pod IP) and
// presents certs[0], if any, whatever CAs etcd asks for (Go's client would otherwise send
// no certificate that the requested CAs did not sign).
func tlsClient(roots *x509.CertPool, certs []tls.Certificate) *http.Client {
	cfg := &tls.Config{RootCAs: roots, ServerName: etcdName, MinVersion: tls.VersionTLS12}
	if len(certs) > 0 {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// tlsExchange completes a TLS handshake as tlsClient would, sends a request and reads the
// first byte of the answer: under TLS 1.3 the server checks the client's certificate after
// the client's side of the handshake is done, so its refusal arrives on that read.
func tlsExchange(addr string, roots *x509.CertPool, certs []tls.Certificate) error {
	cfg := tlsClient(roots, certs).Transport.(*http.Transport).TLSClientConfig
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	if _, err := io.WriteString(conn, "GET /version HTTP/1.1\r\nHost: "+etcdName+"\r\nConnection: close\r\n\r\n"); err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	return err
}

// serverAlert is the TLS alert the server sent ("tls: bad certificate"), or "" when err is
// something else: a dial error, this client refusing the server's certificate, a timeout.
func serverAlert(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return op.Err.Error()
	}
	return ""
}

// plaintextExchange POSTs body in plain HTTP over a new connection and returns what came
// back before the server closed it; a failed dial is reported as "dial ...".
func plaintextExchange(addr, body string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	req := fmt.Sprintf("POST /v3/kv/range HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", addr, len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		return "", err
	}
	answer, err := io.ReadAll(io.LimitReader(conn, 4096))
	return string(answer), err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// sourceIP is this host's address on the way to addr.
func sourceIP(t *testing.T, addr string) net.IP {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.LocalAddr().(*net.TCPAddr).IP
}

// etcdCAIssued is a client and server certificate for ip, signed with the etcd CA's key
// from the Secret nginx-operator-etcd-ca, as a further member's peer certificate would be.
func etcdCAIssued(t *testing.T, ip net.IP) tls.Certificate {
	t.Helper()
	ca := secretKeyPair(t, "nginx-operator-etcd-ca")
	leaf, err := framework.IssueCertificate(&ca, "nginx-operator-etcd-test-peer", []net.IP{ip}, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func secretData(t *testing.T, secret, key string) []byte {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(get(t, "get", "secret", "-n", systemNS, secret, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}"))
	if err != nil || len(data) == 0 {
		t.Fatalf("Secret %s key %s: %v", secret, key, err)
	}
	return data
}

func secretKeyPair(t *testing.T, secret string) tls.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(secretData(t, secret, "tls.crt"), secretData(t, secret, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// selfSignedClientCert is a client certificate no CA of the cluster signed.
func selfSignedClientCert(t *testing.T) tls.Certificate {
	t.Helper()
	leaf, err := framework.IssueCertificate(nil, "nginx-operator-apiserver", nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func describe(code int, body string, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
}
