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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// TestObjectLimits sends objects over the bounds of docs/api.md ("Limits") to the real
// binary: a list one item over its bound, an inline nginx.conf over its length, an
// object whose lists are all within bounds but whose strings make it larger than the
// 256 KiB cap (created, and reached by a small patch), a body over 1 MiB, required
// anti-affinity across namespaces and a PodDisruptionBudget that allows no disruption.
// Each gets its 4xx with the field path; what is within bounds is stored, with a
// Warning where one is due; nothing is answered with a 5xx.
func TestObjectLimits(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.httpClient(false)
	requestsBefore := requestCounts(t, c, s)
	const jsonType = "application/json"
	v2 := badInputVersions[0]
	collection := s.URL("/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators")
	v1Collection := s.URL("/apis/operator.example.com/v1alpha1/namespaces/" + ns + "/nginxoperators")

	env := func(n, valueBytes int) string {
		vars := make([]string, n)
		for i := range vars {
			vars[i] = fmt.Sprintf(`{"name":"E%d","value":%q}`, i, strings.Repeat("x", valueBytes))
		}
		return `{"image":"nginx:1.27","replicas":1,"env":[` + strings.Join(vars, ",") + `]}`
	}
	spec := func(fields string) string { return `{"image":"nginx:1.27","replicas":1,` + fields + `}` }
	preserved, err := json.Marshal(map[string]string{operator.PreservedFieldsAnnotation: `{"spec":` + env(129, 1) + `}`})
	if err != nil {
		t.Fatal(err)
	}

	if code, _, body := send(t, c, http.MethodPost, collection, jsonType, v2.object("patched", v2.spec)); code != http.StatusCreated {
		t.Fatalf("create patched: %d %s", code, truncate(body))
	}
	const antiAffinity = "spec.pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
	cases := []struct {
		badInputCase
		url string
	}{
		{badInputCase: badInputCase{name: "env at its bound", body: v2.object("env-128", env(128, 8)), wantCode: http.StatusCreated, stores: "env-128"}},
		{badInputCase: badInputCase{name: "env over its bound", body: v2.object("env-129", env(129, 8)),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.env", wantMessage: "must have at most 128 items", absent: "env-129"}},
		{badInputCase: badInputCase{name: "env over its bound through v1alpha1",
			body:     []byte(fmt.Sprintf(`{"apiVersion":"operator.example.com/v1alpha1","kind":"NginxOperator","metadata":{"name":"v1-env-129","annotations":%s}}`, preserved)),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.env", absent: "v1-env-129"}, url: v1Collection},
		{badInputCase: badInputCase{name: "tolerations over their bound", body: v2.object("tolerations", spec(`"pod":{"tolerations":[`+strings.TrimSuffix(strings.Repeat(`{"operator":"Exists"},`, 65), ",")+`]}`)),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.pod.tolerations", absent: "tolerations"}},
		{badInputCase: badInputCase{name: "inline config over 128 KiB", body: v2.object("inline", spec(fmt.Sprintf(`"config":{"inline":%q}`, strings.Repeat("#", 128*1024+1)))),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.config.inline", wantMessage: "may not be more than 131072 bytes", absent: "inline"}},
		{badInputCase: badInputCase{name: "lists within bounds, object over 256 KiB", body: v2.object("oversize", env(3, 90*1024)),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec", wantMessage: "over the limit of 262144 bytes", absent: "oversize"}},
		{badInputCase: badInputCase{name: "a small patch to an object over 256 KiB", method: http.MethodPatch, path: "/patched", contentType: "application/json-patch+json",
			body: []byte(fmt.Sprintf(`[{"op":"add","path":"/spec/env","value":[{"name":"A","value":%q}]},`+
				`{"op":"copy","from":"/spec/env/0","path":"/spec/env/-"},{"op":"replace","path":"/spec/env/1/name","value":"B"},`+
				`{"op":"copy","from":"/spec/env/0","path":"/spec/env/-"},{"op":"replace","path":"/spec/env/2/name","value":"C"}]`, strings.Repeat("x", 100*1024))),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec", wantMessage: "over the limit of 262144 bytes", unchanged: "patched"}},
		{badInputCase: badInputCase{name: "body over 1 MiB", body: v2.object("body", env(11, 100*1024)),
			wantCode: http.StatusRequestEntityTooLarge, wantMessage: "limit is 1048576", absent: "body"}},
		{badInputCase: badInputCase{name: "required anti-affinity across namespaces",
			body:     v2.object("anti", spec(`"pod":{"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"app":"db"}},"namespaceSelector":{}}]}}}`)),
			wantCode: http.StatusUnprocessableEntity, wantField: antiAffinity + ".namespaceSelector", wantMessage: "other tenants", absent: "anti"}},
		{badInputCase: badInputCase{name: "preferred anti-affinity across namespaces",
			body:     v2.object("preferred", spec(`"pod":{"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":50,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"app":"db"}},"namespaceSelector":{}}}]}}}`)),
			wantCode: http.StatusCreated, stores: "preferred"}},
		{badInputCase: badInputCase{name: "PodDisruptionBudget maxUnavailable 0", body: v2.object("pdb-zero", spec(`"podDisruptionBudget":{"maxUnavailable":0}`)),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.podDisruptionBudget.maxUnavailable", wantMessage: "blocks every node drain", absent: "pdb-zero"}},
		{badInputCase: badInputCase{name: "PodDisruptionBudget minAvailable 100%", body: v2.object("pdb-all", spec(`"podDisruptionBudget":{"minAvailable":"100%"}`)),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.podDisruptionBudget.minAvailable", absent: "pdb-all"}},
		{badInputCase: badInputCase{name: "PodDisruptionBudget minAvailable equal to replicas", body: v2.object("pdb-warn", spec(`"podDisruptionBudget":{"minAvailable":1}`)),
			wantCode: http.StatusCreated, warning: "allows no disruption", stores: "pdb-warn"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.method == "" {
				tc.method, tc.contentType = http.MethodPost, jsonType
			}
			url := collection
			if tc.url != "" {
				url = tc.url
			}
			var before []byte
			if tc.unchanged != "" {
				_, _, before = send(t, c, http.MethodGet, collection+"/"+tc.unchanged, "", nil)
			}
			code, header, body := send(t, c, tc.method, url+tc.path, tc.contentType, tc.body)
			t.Logf("%s %s (%d bytes): %d", tc.method, tc.path, len(tc.body), code)
			if code != tc.wantCode {
				t.Fatalf("status %d, want %d: %s", code, tc.wantCode, truncate(body))
			}
			if code >= 400 {
				assertStatus(t, body, tc.badInputCase)
			}
			if warnings := strings.Join(header.Values("Warning"), "\n"); !strings.Contains(warnings, tc.warning) {
				t.Errorf("Warning headers %q do not say %q", warnings, tc.warning)
			}
			for name, want := range map[string]int{tc.absent: http.StatusNotFound, tc.stores: http.StatusOK} {
				if name == "" {
					continue
				}
				if code, _, body := send(t, c, http.MethodGet, collection+"/"+name, "", nil); code != want {
					t.Errorf("GET %s: %d, want %d: %s", name, code, want, truncate(body))
				}
			}
			if tc.unchanged != "" {
				if _, _, after := send(t, c, http.MethodGet, collection+"/"+tc.unchanged, "", nil); string(after) != string(before) {
					t.Errorf("%s changed:\n%s\n%s", tc.unchanged, truncate(before), truncate(after))
				}
			}
		})
	}
	assertNo5xxSince(t, c, s, requestsBefore)
}
