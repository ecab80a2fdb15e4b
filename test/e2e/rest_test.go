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
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const collection = "/apis/operator.example.com/v1alpha2/namespaces/default/nginxoperators"

// TestREST calls the API both through kube-apiserver's aggregation layer and directly.
func TestREST(t *testing.T) {
	t.Parallel()
	mustKubectl(t, "apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: rest, namespace: default}\n", "apply", "-f", "-")
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "rest", "--ignore-not-found") })
	client := adminHTTPClient(t)
	for name, base := range map[string]func(string) string{"through kube-apiserver": kubeURL, "direct": operatorURL} {
		t.Run(name, func(t *testing.T) {
			code, body, _ := do(t, client, http.MethodGet, base(collection+"/rest"), map[string]string{"Accept": "application/json"}, "")
			if code != http.StatusOK || !strings.Contains(body, `"kind":"NginxOperator"`) {
				t.Errorf("JSON: %d %s", code, body)
			}
			code, body, hdr := do(t, client, http.MethodGet, base(collection+"/rest"), map[string]string{"Accept": "application/yaml"}, "")
			if code != http.StatusOK || !strings.Contains(body, "kind: NginxOperator") || !strings.Contains(hdr.Get("Content-Type"), "yaml") {
				t.Errorf("YAML: %d %s", code, body)
			}
			code, body, _ = do(t, client, http.MethodGet, base(collection), map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}, "")
			var table metav1.Table
			if err := json.Unmarshal([]byte(body), &table); code != http.StatusOK || err != nil || len(table.ColumnDefinitions) != 11 || len(table.Rows) == 0 {
				t.Errorf("Table: %d %v %s", code, err, body)
			}
			code, _, hdr = do(t, client, http.MethodGet, base(collection), map[string]string{"Accept": "application/vnd.kubernetes.protobuf"}, "")
			if code != http.StatusOK || hdr.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
				t.Errorf("protobuf-only Accept: %d %s, want 200 protobuf", code, hdr.Get("Content-Type"))
			}
			watchStream(t, client, base(collection+"?watch=true&fieldSelector=metadata.name%3Drest"))
		})
	}
}

// watchStream reads the first event of a watch and expects the existing object as ADDED.
func watchStream(t *testing.T, client *http.Client, url string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "application/json")
	c := *client
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: status %d", resp.StatusCode)
	}
	lines := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(resp.Body)
		scanner.Buffer(make([]byte, 1<<20), 1<<20)
		if scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	select {
	case line := <-lines:
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "rest" {
			t.Errorf("first watch event = %v %s", err, line)
		}
	case <-time.After(30 * time.Second):
		t.Error("no watch event within 30s")
	}
}
