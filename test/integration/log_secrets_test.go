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
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestVerboseLogHoldsNoSecrets runs the apiserver at -v=10, where it logs every request,
// sends requests carrying bearer tokens and basic credentials, with and without the admin
// client certificate, and checks that none of them, no Authorization header value and no
// private key of its PKI ends up in the log. It runs the binary: -v is process-wide, and
// the subject is what the process writes.
func TestVerboseLogHoldsNoSecrets(t *testing.T) {
	dir := t.TempDir()
	s := startBinaryServer(t, dir, "-v=10")
	token := "nginx-operator-test-token-" + randomHex(t)
	password := "nginx-operator-test-password-" + randomHex(t)
	basic := base64.StdEncoding.EncodeToString([]byte("intruder:" + password))
	collection := s.URL("/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators")

	requests := []struct {
		name          string
		client        *http.Client
		method, url   string
		authorization string
		body          string
		want          int
	}{
		{"bearer token without a certificate", s.httpClient(true), http.MethodGet, collection, "Bearer " + token, "", http.StatusUnauthorized},
		{"basic credentials without a certificate", s.httpClient(true), http.MethodGet, collection, "Basic " + basic, "", http.StatusUnauthorized},
		{"bearer token in a create without a certificate", s.httpClient(true), http.MethodPost, collection, "Bearer " + token,
			`{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":"tokened"}}`, http.StatusUnauthorized},
		{"bearer token next to the admin certificate", s.httpClient(false), http.MethodGet, collection, "Bearer " + token, "", http.StatusOK},
		{"bearer token in a bad create next to the admin certificate", s.httpClient(false), http.MethodPost, collection, "Bearer " + token, `{"kind":`, http.StatusBadRequest},
	}
	for _, r := range requests {
		req, err := http.NewRequest(r.method, r.url, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", r.authorization)
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != r.want {
			t.Errorf("%s: %d, want %d", r.name, resp.StatusCode, r.want)
		}
	}
	// An ordinary create and get through the clientset, with the admin certificate.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "logged"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Get(ctx, "logged", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Stopping flushes the log.
	s.stop()
	log, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("apiserver-%d.log", s.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("-v=10 log: %d bytes, %d lines, %d requests logged", len(log), bytes.Count(log, []byte("\n")), bytes.Count(log, []byte(`"HTTP" verb=`)))
	// The log must really be verbose: it records the rejected request itself.
	if !bytes.Contains(log, []byte(`URI="/apis/operator.example.com/v1alpha2/namespaces/default/nginxoperators"`)) ||
		!bytes.Contains(log, []byte("resp=401")) {
		t.Fatalf("the log does not record the requests; the test would prove nothing:\n%s", tail(log, 3000))
	}

	secrets := map[string]string{"the bearer token": token, "the basic password": password, "the basic credentials": basic,
		"a private key PEM": "PRIVATE KEY"}
	keys, _ := filepath.Glob(filepath.Join(dir, "pki", "*.key"))
	if len(keys) == 0 {
		t.Fatal("no private keys under pki/ to look for")
	}
	for _, file := range keys {
		secrets["the key "+filepath.Base(file)] = keyMaterial(t, file)
	}
	for what, secret := range secrets {
		if i := bytes.Index(log, []byte(secret)); i >= 0 {
			t.Errorf("the log holds %s: ...%s...", what, log[max(0, i-200):min(len(log), i+len(secret)+50)])
		}
	}
	// Header dumps name the header; a value must never follow it.
	for _, line := range strings.Split(string(log), "\n") {
		lower := strings.ToLower(line)
		for _, scheme := range []string{"bearer ", "basic "} {
			if i := strings.Index(lower, "authorization"); i >= 0 && strings.Contains(lower[i:], scheme) && !strings.Contains(lower[i:], scheme+"<masked>") {
				t.Errorf("a log line shows an Authorization value: %s", line)
			}
		}
	}
}

// keyMaterial returns the base64 of a private key's DER bytes as its PEM file spells it
// (the first 64 characters, one PEM line: enough to recognise it).
func keyMaterial(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM block", file)
	}
	return base64.StdEncoding.EncodeToString(block.Bytes)[:64]
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
