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
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// The Secrets of the cert-manager overlay's Certificates, the same names hack/deploy-certs.sh
// writes, so that the workloads mount either.
var certManagerSecrets = []string{
	"nginx-operator-ca", "nginx-operator-apiserver-tls", "nginx-operator-controller-metrics-tls",
	"nginx-operator-etcd-ca", "nginx-operator-etcd-server-tls", "nginx-operator-etcd-peer-tls", "nginx-operator-etcd-client-tls",
}

// certManagerIssuesAndRenews runs cert-manager (its issuing controllers and CA injector,
// built by make tools from hack/tools/ecosystem/cert-manager) and moves the installation the earlier
// tests left (etcd on its volumes, certificates from hack/deploy-certs.sh: etcdServes) to the
// cert-manager overlay, as docs/operations.md says: every Certificate turns Ready, the
// injector sets the APIServices' caBundle, etcd restarts onto cert-manager's CA, and the
// objects of the earlier tests are all there. Then renewals of the apiserver's serving
// certificate and etcd client certificate, forced as `cmctl renew` does, run under the
// read/write loop: the pods serve and present the new certificates and no request fails.
func certManagerIssuesAndRenews(t *testing.T, refs map[string]string) {
	bin, crds := framework.ToolBinary(t, "CERT_MANAGER_BIN"), framework.ToolBinary(t, "CERT_MANAGER_CRDS_DIR")
	kc.Apply(t, 5*time.Minute, "", "-f", crds)
	kc.WaitEstablished(t, 3*time.Minute, "crd/certificates.cert-manager.io",
		"crd/certificaterequests.cert-manager.io", "crd/issuers.cert-manager.io")
	t.Setenv("KUBECONFIG", stack.Kubeconfig())
	cm, err := framework.StartProcess(filepath.Join(stack.LocalDir, "logs", "cert-manager.log"), bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cm.Stop(os.Interrupt, 10*time.Second) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("at the failure:\n%s", get(t, "get", "certificates,certificaterequests,issuers", "-n", systemNS, "-o", "wide"))
		}
	})
	// The NginxOperators of the earlier tests, as etcd holds them (the APIServices may be
	// gone: the OLM test deleted them with the CSV).
	objects := storedNginxOperators(t)

	// cert-manager issues into Secrets it made: the ones hack/deploy-certs.sh made go first.
	mustKubectl(t, "", append([]string{"delete", "secret", "-n", systemNS, "--ignore-not-found"}, certManagerSecrets...)...)
	start := time.Now()
	mustKubectl(t, "", "apply", "-k", overlayWithImages(t, "artifacts/overlays/cert-manager", refs))
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=3m", "certificate", "--all", "-n", systemNS)
	t.Logf("%d Certificates Ready %s after the overlay was applied: %s", len(strings.Fields(get(t, "get", "certificates", "-n", systemNS, "-o", "name"))),
		framework.Describe(time.Since(start)), get(t, "get", "certificates", "-n", systemNS, "-o", "jsonpath={.items[*].metadata.name}"))

	// etcd and the apiserver's etcd client read the etcd CA only at start: the members
	// restart together onto cert-manager's (one at a time, a member on the new CA and one on
	// the old could not talk), then the apiservers.
	restarted := time.Now()
	mustKubectl(t, "", "delete", "pod", "-n", systemNS, "-l", etcdSelector, "--wait=false")
	waitForEtcdMembers(t, 3*time.Minute)
	mustKubectl(t, "", "rollout", "restart", "-n", systemNS, "deployment/nginx-operator-apiserver")
	for _, d := range []string{"nginx-operator-apiserver", "nginx-operator-controller"} {
		mustKubectl(t, "", "rollout", "status", "-n", systemNS, "deployment/"+d, "--timeout=3m")
	}
	// The injector adds the CA to the caBundle and drops only expired ones (cert-manager's
	// CAInjectorMerging, on by default), so that clients trust a renewed CA before it signs.
	ca := secretData(t, "nginx-operator-apiserver-tls", "ca.crt")
	var caBundle string
	waitFor(t, 3*time.Minute, "both APIServices Available with cert-manager's CA injected", func() bool {
		out := get(t, "get", "apiservice", "v1alpha2.operator.example.com", "v1alpha1.operator.example.com",
			"-o", `jsonpath={range .items[*]}{.spec.caBundle} {.status.conditions[?(@.type=="Available")].status}{"\n"}{end}`)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, line := range lines {
			f := strings.Fields(line)
			if len(f) != 2 || f[1] != "True" || !bundleHolds(t, f[0], ca) {
				return false
			}
			caBundle = f[0]
		}
		return len(lines) == 2
	})
	t.Logf("etcd members restarted onto cert-manager's CA; APIServices Available with cert-manager's CA (serial %s) in a caBundle of %d certificates %s after the restart",
		certSerial(t, ca), len(bundleCerts(t, caBundle)), framework.Describe(time.Since(restarted)))
	etcdServing := secretSerial(t, "nginx-operator-etcd-server-tls")
	for _, member := range readyPods(t, systemNS, etcdSelector) {
		if served := etcdServedSerial(t, member); served != etcdServing {
			t.Errorf("etcd member %s serves certificate %q, not the one in nginx-operator-etcd-server-tls (%s)", member, served, etcdServing)
		}
	}
	t.Logf("the etcd members serve cert-manager's certificate, serial %s, verified by its etcd CA", etcdServing)
	if now := strings.Count(mustKubectl(t, "", "get", "nginxoperators", "-A", "-o", "name"), "\n"); now != objects {
		t.Errorf("%d NginxOperators served after the move to cert-manager, %d stored in etcd before", now, objects)
	} else {
		t.Logf("all %d NginxOperators etcd held before the move are served", now)
	}

	// Renewals under the read/write loop.
	servingBefore, clientBefore := secretSerial(t, "nginx-operator-apiserver-tls"), secretSerial(t, "nginx-operator-etcd-client-tls")
	underLoad(t, "cert-manager-renewal-load", func() {
		renewed := time.Now()
		renewCertificate(t, "nginx-operator-apiserver")
		renewCertificate(t, "nginx-operator-etcd-client")
		var servingAfter, clientAfter string
		waitFor(t, 2*time.Minute, "cert-manager to issue both certificates again", func() bool {
			servingAfter, clientAfter = secretSerial(t, "nginx-operator-apiserver-tls"), secretSerial(t, "nginx-operator-etcd-client-tls")
			return servingAfter != servingBefore && clientAfter != clientBefore
		})
		t.Logf("renewed in %s: serving certificate serial %s -> %s, etcd client certificate serial %s -> %s",
			framework.Describe(time.Since(renewed)), servingBefore, servingAfter, clientBefore, clientAfter)
		pods := readyPods(t, systemNS, apiserverSelector)
		d := waitFor(t, 3*time.Minute, "every apiserver pod to serve the new certificate and hold the new etcd client certificate", func() bool {
			for _, pod := range pods {
				if apiserverServedSerial(t, pod, caBundle) != servingAfter || mountedSerial(t, pod, "etcd-client") != clientAfter {
					return false
				}
			}
			return true
		})
		t.Logf("both apiserver pods serve serial %s and hold etcd client serial %s %s after the renewal (kubelet's Secret sync)",
			servingAfter, clientAfter, framework.Describe(d))
		// The etcd client reads the key pair at each TLS handshake: a member that restarts
		// makes the apiservers connect again, with the new certificate.
		member := readyPods(t, systemNS, etcdSelector)[0]
		mustKubectl(t, "", "delete", "pod", "-n", systemNS, member)
		waitForEtcdMembers(t, 3*time.Minute)
		t.Logf("etcd member %s restarted; the apiservers reconnected to it with the new client certificate", member)
	})
}

// overlayWithImages is a kustomization over the repository's overlay dir with the images the
// test built, as hack/deploy-to-node.sh writes one over artifacts/deploy, and any patches
// (kustomize patches entries, in YAML flow style).
func overlayWithImages(t *testing.T, dir string, refs map[string]string, patches ...string) string {
	t.Helper()
	work := t.TempDir()
	rel, err := filepath.Rel(work, filepath.Join(stack.RepoRoot, dir))
	if err != nil {
		t.Fatal(err)
	}
	image := func(name, ref string) string {
		i := strings.LastIndex(ref, ":")
		return fmt.Sprintf("  - {name: %s, newName: %s, newTag: %s}\n", name, ref[:i], ref[i+1:])
	}
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + rel + "\nimages:\n" +
		image("example.com/nginx-operator", refs["NGINX_OPERATOR_IMAGE"]) + image("example.com/nginx-operator/nginx-exporter", refs["NGINX_EXPORTER_IMAGE"]) +
		image("registry.k8s.io/etcd", refs["ETCD_IMAGE"])
	if len(patches) > 0 {
		kustomization += "patches:\n"
		for _, p := range patches {
			kustomization += "  - " + p + "\n"
		}
	}
	if err := os.WriteFile(filepath.Join(work, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	return work
}

// renewCertificate asks cert-manager to issue a Certificate again now, as `cmctl renew`
// does: it adds the Issuing condition with reason ManuallyTriggered.
func renewCertificate(t *testing.T, name string) {
	t.Helper()
	condition := fmt.Sprintf(`{"type": "Issuing", "status": "True", "reason": "ManuallyTriggered", "message": "Certificate re-issuance manually triggered", "lastTransitionTime": %q}`,
		time.Now().UTC().Format(time.RFC3339))
	mustKubectl(t, "", "patch", "certificate", "-n", systemNS, name, "--subresource=status", "--type=json",
		"-p", `[{"op": "add", "path": "/status/conditions/-", "value": `+condition+`}]`)
}

// bundleHolds reports whether the base64 caBundle holds the PEM certificate ca.
func bundleHolds(t *testing.T, caBundle string, ca []byte) bool {
	t.Helper()
	want := bundleCerts(t, base64.StdEncoding.EncodeToString(ca))
	for _, cert := range bundleCerts(t, caBundle) {
		if len(want) == 1 && cert.Equal(want[0]) {
			return true
		}
	}
	return false
}

// bundleCerts parses the certificates of a base64 PEM bundle.
func bundleCerts(t *testing.T, caBundle string) []*x509.Certificate {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(caBundle)
	if err != nil {
		t.Fatal(err)
	}
	var certs []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, cert)
	}
	return certs
}

// secretSerial is the serial number of the certificate in a Secret's tls.crt.
func secretSerial(t *testing.T, secret string) string {
	t.Helper()
	return certSerial(t, secretData(t, secret, "tls.crt"))
}

func certSerial(t *testing.T, pemData []byte) string {
	t.Helper()
	block, _ := pem.Decode(pemData)
	if block == nil {
		t.Fatal("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber.String()
}

// apiserverServedSerial is the serial of the certificate an apiserver pod serves, or "" when
// caBundle does not verify it for the Service's name, as kube-apiserver checks it.
func apiserverServedSerial(t *testing.T, pod, caBundle string) string {
	t.Helper()
	bundle, err := base64.StdEncoding.DecodeString(caBundle)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	return servedSerial(t, net.JoinHostPort(podIP(t, pod), "8443"), &tls.Config{RootCAs: roots, ServerName: "nginx-operator-apiserver." + systemNS + ".svc"})
}

// etcdServedSerial is the serial of the certificate an etcd member serves to a client with
// the apiserver's client certificate, verified by the etcd CA.
func etcdServedSerial(t *testing.T, pod string) string {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(secretData(t, "nginx-operator-etcd-client-tls", "ca.crt"))
	return servedSerial(t, net.JoinHostPort(podIP(t, pod), "2379"), &tls.Config{RootCAs: roots, ServerName: etcdName,
		Certificates: []tls.Certificate{secretKeyPair(t, "nginx-operator-etcd-client-tls")}})
}

func servedSerial(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	cfg.MinVersion = tls.VersionTLS12
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Logf("TLS to %s: %v", addr, err)
		return ""
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func podIP(t *testing.T, pod string) string {
	t.Helper()
	ip := get(t, "get", "pod", "-n", systemNS, pod, "-o", "jsonpath={.status.podIP}")
	if parsed := net.ParseIP(ip); parsed == nil || !localNet.Contains(parsed) {
		t.Fatalf("pod %s has IP %q, not on the local node's network", pod, ip)
	}
	return ip
}

// mountedSerial is the serial of tls.crt in a pod's Secret volume as kubelet wrote it on
// this node, or "" while it is not there.
func mountedSerial(t *testing.T, pod, volume string) string {
	t.Helper()
	uid := get(t, "get", "pod", "-n", systemNS, pod, "-o", "jsonpath={.metadata.uid}")
	data, err := os.ReadFile(filepath.Join(stack.LocalDir, "node", "kubelet", "pods", uid, "volumes", "kubernetes.io~secret", volume, "tls.crt"))
	if err != nil {
		return ""
	}
	return certSerial(t, data)
}

// storedNginxOperators counts the NginxOperators in etcd, asking a member directly.
func storedNginxOperators(t *testing.T) int {
	t.Helper()
	out, err := etcdctl(t, readyPods(t, systemNS, etcdSelector)[0], "get", "/registry/operator.example.com/operator.example.com/nginxoperators/",
		"--prefix", "--keys-only", "--limit=1", "-w", "json") // count is the whole range's, whatever the limit
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Count int `json:"count"`
	}
	if err := json.Unmarshal([]byte(out), &answer); err != nil {
		t.Fatalf("etcdctl get: %v: %s", err, out)
	}
	return answer.Count
}
