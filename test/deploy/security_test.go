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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// etcdName is the name etcd's serving certificate is for (the apiserver's --etcd-servers).
const etcdName = "nginx-operator-etcd-0.nginx-operator-etcd.nginx-operator-system.svc"

// etcdAdmitsOnlyTheAPIServer talks to the etcd pod from this machine (its pod IP on the
// node's bridge, local and behind the guards): plaintext and TLS without a certificate,
// or with one from another CA, are refused on the client and the peer port; the apiserver's
// client certificate reads the operator's keys. The metrics port serves health, not data.
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

	for _, port := range []string{"2379", "2380"} {
		addr := net.JoinHostPort(podIP, port)
		// Plain HTTP: the TLS listener answers with an error, never with data.
		code, body, err := etcdRequest(&http.Client{Timeout: 10 * time.Second}, "http://"+addr+"/v3/kv/range", rangeAll)
		if err == nil && (code == http.StatusOK || strings.Contains(body, `"count"`)) {
			t.Errorf("plaintext on %s: %d %s", port, code, body)
		}
		t.Logf("plaintext on port %s refused: %s", port, describe(code, body, err))
		for _, tc := range []struct {
			name  string
			certs []tls.Certificate
		}{{"TLS without a client certificate", nil}, {"TLS with a certificate of another CA", []tls.Certificate{stranger}}} {
			code, body, err := etcdRequest(tlsClient(roots, tc.certs), "https://"+addr+"/v3/kv/range", rangeAll)
			if err == nil {
				t.Errorf("%s on %s: %d %s, want the handshake refused", tc.name, port, code, body)
			} else {
				t.Logf("%s on port %s refused: %v", tc.name, port, err)
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
	want := map[string]string{"nginx-operator-apiserver": "2379", "nginx-operator-etcd": "2380"}
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
	if selected != 1 {
		t.Errorf("the NetworkPolicy selects %d pods of %s, want the etcd pod", selected, systemNS)
	}
	if !selector.Matches(labels.Set{"app.kubernetes.io/name": "nginx-operator-etcd"}) || selector.Matches(labels.Set{"app.kubernetes.io/name": "nginx-operator-apiserver"}) {
		t.Errorf("podSelector %s does not select exactly the etcd pods", selector)
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
// its create event, with the body sent, and its get, at Metadata level, in the audit log
// the apiserver pods write to stdout (kubectl logs).
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
	var create, read *event
	lines := 0
	waitFor(t, 2*time.Minute, "the create and the get in the apiservers' audit log", func() bool {
		out, _, err := kubectl(t, "", "logs", "-n", systemNS, "-l", apiserverSelector, "--tail=-1", "-c", "apiserver")
		if err != nil {
			return false
		}
		create, read, lines = nil, nil, 0
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
				read = &e
			}
		}
		return create != nil && read != nil
	})
	t.Logf("%d audit events in the apiserver pods' logs; create by %q at %s, get at %s", lines, create.User.Username, create.Level, read.Level)
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
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nginx-operator-apiserver"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func describe(code int, body string, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
}
