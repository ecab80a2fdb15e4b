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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// badInputCase is one request with bad input and what the server must answer.
type badInputCase struct {
	name        string
	method      string
	path        string // below the version's nginxoperators collection: "" or "/<name>"
	query       string
	contentType string
	body        []byte
	wantCode    int
	// wantMessage must appear in the Status message.
	wantMessage string
	// wantField must be the field of one of the Status causes (422).
	wantField string
	// absent names an object that must not exist afterwards, stores one the case creates.
	absent, stores string
	// unchanged names an object whose resourceVersion and spec must stay as they were.
	unchanged string
	// warning must appear in a Warning header, noWarning in none.
	warning, noWarning string
}

// badInputVersion is what a served version needs for the table.
type badInputVersion struct {
	version string
	// spec is a valid spec in the version, as JSON, with "replicas":1.
	spec string
	// invalidStatus is a status the version can express that validation refuses at
	// invalidStatusField (v1alpha1's status holds only conditions).
	invalidStatus, invalidStatusField string
}

var badInputVersions = []badInputVersion{
	{version: v1alpha2.SchemeGroupVersion.Version, spec: `{"image":"nginx:1.27","replicas":1}`,
		invalidStatus: `{"replicas":1,"readyReplicas":2}`, invalidStatusField: "status.readyReplicas"},
	{version: v1alpha1.SchemeGroupVersion.Version, spec: `{"port":8080,"replicas":1}`,
		invalidStatus:      `{"conditions":[{"type":"Available","status":"Maybe","reason":"Guessing","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}`,
		invalidStatusField: "status.conditions[0].status"},
}

// The apiserver's request body limit (genericapiserver.Config.MaxRequestBodyBytes, 3 MiB
// by default; ours sets 1 MiB, below etcd's 1.5 MiB request limit).
const maxRequestBodyBytes = 1024 * 1024

// TestBadInput sends malformed, hostile and invalid requests to the real server in both
// served versions: each gets the exact 4xx with a Status that explains it, nothing is
// stored or changed, the server stays ready, and it never answered our group with a 5xx.
func TestBadInput(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.httpClient(false)
	// Longer than the server's own 60 s request timeout, so that its answer is judged: a
	// 10000-element update under the race detector, beside the other lanes of make test on
	// 2 cores, has taken more than the client's usual 30 s.
	c.Timeout = 2 * time.Minute
	requestsBefore := requestCounts(t, c, s)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	counts := map[int]int{}
	for _, v := range badInputVersions {
		t.Run(v.version, func(t *testing.T) {
			collection := s.URL(fmt.Sprintf("/apis/operator.example.com/%s/namespaces/%s/nginxoperators", v.version, ns))
			target := "target-" + v.version
			if code, _, body := send(t, c, http.MethodPost, collection, "application/json", v.object(target, v.spec)); code != http.StatusCreated {
				t.Fatalf("create %s: %d %s", target, code, body)
			}
			// A resourceVersion that was current once: the update below moves on from it.
			stale := v.read(t, c, collection, target).GetResourceVersion()
			if code, _, body := send(t, c, http.MethodPatch, collection+"/"+target, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"moved":"on"}}}`)); code != http.StatusOK {
				t.Fatalf("label %s: %d %s", target, code, body)
			}
			current := v.read(t, c, collection, target)
			wantStored := []string{target}

			for _, tc := range v.cases(target, stale, current) {
				t.Run(tc.name, func(t *testing.T) {
					if tc.stores != "" {
						wantStored = append(wantStored, tc.stores)
					}
					var before *unstructured.Unstructured
					if tc.unchanged != "" {
						before = v.read(t, c, collection, tc.unchanged)
					}
					started := time.Now()
					code, header, body := send(t, c, tc.method, collection+tc.path+tc.query, tc.contentType, tc.body)
					took := time.Since(started)
					counts[code]++
					t.Logf("%s %s%s (%d bytes): %d in %s", tc.method, tc.path, tc.query, len(tc.body), code, took.Round(time.Millisecond))
					if tc.name == "YAML alias bomb" {
						framework.Measure(t, "bad-input").Millis("yaml-alias-bomb-"+v.version, took, "a YAML alias bomb refused with 400, through "+v.version)
					}
					if code != tc.wantCode {
						t.Fatalf("status %d, want %d: %s", code, tc.wantCode, truncate(body))
					}
					if code >= 400 {
						assertStatus(t, body, tc)
					}
					warnings := strings.Join(header.Values("Warning"), "\n")
					if tc.warning != "" && !strings.Contains(warnings, tc.warning) {
						t.Errorf("Warning headers %q do not name %q", warnings, tc.warning)
					}
					if tc.noWarning != "" && strings.Contains(warnings, tc.noWarning) {
						t.Errorf("Warning headers %q name %q", warnings, tc.noWarning)
					}
					if tc.absent != "" {
						if code, _, body := send(t, c, http.MethodGet, collection+"/"+tc.absent, "", nil); code != http.StatusNotFound {
							t.Errorf("%s was stored: GET answers %d %s", tc.absent, code, truncate(body))
						}
					}
					if tc.unchanged != "" {
						after := v.read(t, c, collection, tc.unchanged)
						if after.GetResourceVersion() != before.GetResourceVersion() || !equalSpecs(before, after) {
							t.Errorf("%s changed: resourceVersion %s -> %s, spec %v -> %v", tc.unchanged,
								before.GetResourceVersion(), after.GetResourceVersion(), before.Object["spec"], after.Object["spec"])
						}
					}
					assertReady(ctx, t, s)
				})
			}
			var ours []string
			for _, name := range v.list(t, c, collection) {
				if strings.HasSuffix(name, "-"+v.version) {
					ours = append(ours, name)
				}
			}
			slices.Sort(ours)
			slices.Sort(wantStored)
			if !slices.Equal(ours, wantStored) {
				t.Errorf("stored objects %v; want %v", ours, wantStored)
			}
		})
	}
	t.Logf("answers by status code: %v", counts)
	assertNo5xxSince(t, c, s, requestsBefore)
}

// cases are the rows for one version. target exists; stale is an old resourceVersion of it.
func (v badInputVersion) cases(target, stale string, current *unstructured.Unstructured) []badInputCase {
	const jsonType, yamlType = "application/json", "application/yaml"
	apiVersion := "operator.example.com/" + v.version
	obj := func(name string) []byte { return v.object(name, v.spec) }
	withSpec := func(name, spec string) []byte { return v.object(name, spec) }
	// update bodies keep the target's current metadata, so only the tested change differs.
	update := func(spec string) []byte {
		u := current.DeepCopy()
		var parsed map[string]interface{}
		if err := json.Unmarshal([]byte(spec), &parsed); err != nil {
			panic(err)
		}
		u.Object["spec"] = parsed
		data, err := u.MarshalJSON()
		if err != nil {
			panic(err)
		}
		return data
	}
	invalidSpec := strings.Replace(v.spec, `"replicas":1`, `"replicas":-1`, 1)
	object := "/" + target
	// Both versions write the same resource: names carry the version.
	n := func(name string) string { return name + "-" + v.version }

	cases := []badInputCase{
		{name: "malformed JSON", method: http.MethodPost, contentType: jsonType,
			body:     []byte(`{"apiVersion":"` + apiVersion + `","kind":"NginxOperator","metadata":{"name":"` + n("malformed-json") + `"},"spec":{`),
			wantCode: http.StatusBadRequest, wantMessage: "unexpected end of JSON input", absent: n("malformed-json")},
		{name: "malformed YAML", method: http.MethodPost, contentType: yamlType,
			body:     []byte("apiVersion: " + apiVersion + "\nkind: NginxOperator\nmetadata:\n  name: malformed-yaml\nspec: {image: [\n"),
			wantCode: http.StatusBadRequest, wantMessage: "yaml", absent: n("malformed-yaml")},
		{name: "YAML alias bomb", method: http.MethodPost, contentType: yamlType, body: yamlAliasBomb(apiVersion, n("alias-bomb")),
			wantCode: http.StatusBadRequest, wantMessage: "excessive aliasing", absent: n("alias-bomb")},
		{name: "JSON nested 10000 deep", method: http.MethodPost, contentType: jsonType, body: deeplyNested(apiVersion, n("deep"), 10000),
			wantCode: http.StatusBadRequest, wantMessage: "max depth", absent: n("deep")},
		{name: "JSON nested 100000 deep", method: http.MethodPost, contentType: jsonType, body: deeplyNested(apiVersion, n("deeper"), 100000),
			wantCode: http.StatusBadRequest, wantMessage: "max depth", absent: n("deeper")},
		{name: "malformed protobuf", method: http.MethodPost, contentType: "application/vnd.kubernetes.protobuf",
			body: []byte("k8s\x00\x0a\xff\xff\xff"), wantCode: http.StatusBadRequest, wantMessage: "the object provided is unrecognized"},
		{name: "body over the size limit", method: http.MethodPost, contentType: jsonType, body: oversized(apiVersion, n("too-large")),
			wantCode: http.StatusRequestEntityTooLarge, wantMessage: "limit is 1048576", absent: n("too-large")},
		{name: "wrong kind", method: http.MethodPost, contentType: jsonType,
			body:     []byte(`{"apiVersion":"` + apiVersion + `","kind":"Deployment","metadata":{"name":"` + n("wrong-kind") + `"}}`),
			wantCode: http.StatusBadRequest, wantMessage: `no kind "Deployment" is registered`, absent: n("wrong-kind")},
		{name: "list kind", method: http.MethodPost, contentType: jsonType,
			body:     []byte(`{"apiVersion":"` + apiVersion + `","kind":"NginxOperatorList","items":[]}`),
			wantCode: http.StatusBadRequest, wantMessage: "NginxOperatorList"},
		{name: "unknown version", method: http.MethodPost, contentType: jsonType,
			body:     []byte(`{"apiVersion":"operator.example.com/v9","kind":"NginxOperator","metadata":{"name":"` + n("wrong-version") + `"}}`),
			wantCode: http.StatusBadRequest, wantMessage: `operator.example.com/v9`, absent: n("wrong-version")},
		{name: "kind of another group", method: http.MethodPost, contentType: jsonType,
			body:     []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + n("other-group") + `"}}`),
			wantCode: http.StatusBadRequest, wantMessage: `apps/v1`, absent: n("other-group")},
		{name: "unknown field strict", method: http.MethodPost, query: "?fieldValidation=Strict", contentType: jsonType,
			body:     withSpec(n("unknown-field-strict"), strings.Replace(v.spec, "{", `{"bogus":true,`, 1)),
			wantCode: http.StatusBadRequest, wantMessage: `unknown field "spec.bogus"`, absent: n("unknown-field-strict")},
		{name: "unknown field warn", method: http.MethodPost, query: "?fieldValidation=Warn", contentType: jsonType,
			body:     withSpec(n("unknown-field-warn"), strings.Replace(v.spec, "{", `{"bogus":true,`, 1)),
			wantCode: http.StatusCreated, warning: `unknown field \"spec.bogus\"`, stores: n("unknown-field-warn")},
		{name: "unknown field ignore", method: http.MethodPost, query: "?fieldValidation=Ignore", contentType: jsonType,
			body:     withSpec(n("unknown-field-ignore"), strings.Replace(v.spec, "{", `{"bogus":true,`, 1)),
			wantCode: http.StatusCreated, noWarning: "bogus", stores: n("unknown-field-ignore")},
		{name: "duplicate field strict", method: http.MethodPost, query: "?fieldValidation=Strict", contentType: jsonType,
			body:     withSpec(n("duplicate-field"), strings.Replace(v.spec, "{", `{"replicas":2,`, 1)),
			wantCode: http.StatusBadRequest, wantMessage: `duplicate field "spec.replicas"`, absent: n("duplicate-field")},
		{name: "name with uppercase", method: http.MethodPost, contentType: jsonType, body: obj(n("Web")),
			wantCode: http.StatusUnprocessableEntity, wantField: "metadata.name", absent: n("Web")},
		{name: "name too long", method: http.MethodPost, contentType: jsonType, body: obj(strings.Repeat("a", 64)),
			wantCode: http.StatusUnprocessableEntity, wantField: "metadata.name", absent: strings.Repeat("a", 64)},
		{name: "name with slash", method: http.MethodPost, contentType: jsonType, body: obj("a/b"),
			wantCode: http.StatusUnprocessableEntity, wantField: "metadata.name"},
		{name: "invalid spec", method: http.MethodPost, contentType: jsonType, body: withSpec(n("negative"), invalidSpec),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.replicas", absent: n("negative")},
		{name: "stale resourceVersion", method: http.MethodPut, path: object, contentType: jsonType,
			body:     staleUpdate(current, stale),
			wantCode: http.StatusConflict, wantMessage: "the object has been modified", unchanged: target},
		{name: "invalid update", method: http.MethodPut, path: object, contentType: jsonType, body: update(invalidSpec),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.replicas", unchanged: target},
		{name: "dry-run create", method: http.MethodPost, query: "?dryRun=All", contentType: jsonType, body: obj(n("dry-run")),
			wantCode: http.StatusCreated, absent: n("dry-run")},
		{name: "dry-run update", method: http.MethodPut, path: object, query: "?dryRun=All", contentType: jsonType,
			body: update(strings.Replace(v.spec, `"replicas":1`, `"replicas":5`, 1)), wantCode: http.StatusOK, unchanged: target},
		{name: "dry-run delete", method: http.MethodDelete, path: object, query: "?dryRun=All", wantCode: http.StatusOK, unchanged: target},
		{name: "JSON patch to an invalid object", method: http.MethodPatch, path: object, contentType: "application/json-patch+json",
			body:     []byte(`[{"op":"replace","path":"/spec/replicas","value":-1}]`),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.replicas", unchanged: target},
		{name: "merge patch to an invalid object", method: http.MethodPatch, path: object, contentType: "application/merge-patch+json",
			body:     []byte(`{"spec":{"replicas":-1}}`),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.replicas", unchanged: target},
		{name: "strategic merge patch to an invalid object", method: http.MethodPatch, path: object, contentType: "application/strategic-merge-patch+json",
			body:     []byte(`{"spec":{"replicas":-1}}`),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.replicas", unchanged: target},
		{name: "apply patch to an invalid object", method: http.MethodPatch, path: object, query: "?fieldManager=badinput&force=true",
			contentType: "application/apply-patch+yaml",
			body:        []byte("apiVersion: " + apiVersion + "\nkind: NginxOperator\nmetadata:\n  name: " + target + "\nspec:\n  replicas: -1\n"),
			wantCode:    http.StatusUnprocessableEntity, wantField: "spec.replicas", unchanged: target},
		{name: "malformed JSON patch", method: http.MethodPatch, path: object, contentType: "application/json-patch+json",
			body: []byte(`[{"op":"replace","path":`), wantCode: http.StatusBadRequest, wantMessage: "invalid JSON patch", unchanged: target},
		{name: "JSON patch that is not a list of operations", method: http.MethodPatch, path: object, contentType: "application/json-patch+json",
			body: []byte(`{"op":"replace"}`), wantCode: http.StatusBadRequest, wantMessage: "error decoding patch", unchanged: target},
		{name: "malformed merge patch", method: http.MethodPatch, path: object, contentType: "application/merge-patch+json",
			body: []byte(`{"spec":`), wantCode: http.StatusBadRequest, wantMessage: "invalid JSON patch", unchanged: target},
		{name: "malformed strategic merge patch", method: http.MethodPatch, path: object, contentType: "application/strategic-merge-patch+json",
			body: []byte(`{"spec":`), wantCode: http.StatusBadRequest, wantMessage: "invalid JSON patch", unchanged: target},
		{name: "malformed apply patch", method: http.MethodPatch, path: object, query: "?fieldManager=badinput", contentType: "application/apply-patch+yaml",
			body: []byte("spec: {replicas: [\n"), wantCode: http.StatusBadRequest, wantMessage: "yaml", unchanged: target},
		{name: "unsupported patch type", method: http.MethodPatch, path: object, contentType: "application/xml",
			body: []byte(`<spec/>`), wantCode: http.StatusUnsupportedMediaType, wantMessage: "Unsupported Media Type", unchanged: target},
		{name: "unsupported body type", method: http.MethodPost, contentType: "text/plain",
			body: obj(n("text-plain")), wantCode: http.StatusUnsupportedMediaType, wantMessage: "accepted media types include: application/json", absent: n("text-plain")},
	}
	// The status and scale subresources decode and validate bodies of their own.
	scale := func(replicas string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":%q,"namespace":%q},"spec":{"replicas":%s}}`, target, ns, replicas))
	}
	cases = append(cases,
		badInputCase{name: "invalid status update", method: http.MethodPut, path: object + "/status", contentType: jsonType,
			body:     withStatus(current, v.invalidStatus),
			wantCode: http.StatusUnprocessableEntity, wantField: v.invalidStatusField, unchanged: target},
		badInputCase{name: "merge patch to an invalid status", method: http.MethodPatch, path: object + "/status", contentType: "application/merge-patch+json",
			body: []byte(`{"status":` + v.invalidStatus + `}`), wantCode: http.StatusUnprocessableEntity, wantField: v.invalidStatusField, unchanged: target},
		badInputCase{name: "malformed status patch", method: http.MethodPatch, path: object + "/status", contentType: "application/merge-patch+json",
			body: []byte(`{"status":`), wantCode: http.StatusBadRequest, wantMessage: "invalid JSON patch", unchanged: target},
		badInputCase{name: "negative scale", method: http.MethodPut, path: object + "/scale", contentType: jsonType, body: scale("-1"),
			wantCode: http.StatusUnprocessableEntity, wantField: "spec.replicas", unchanged: target},
		badInputCase{name: "scale to a string", method: http.MethodPut, path: object + "/scale", contentType: jsonType, body: scale(`"three"`),
			wantCode: http.StatusBadRequest, wantMessage: "replicas", unchanged: target},
		badInputCase{name: "NginxOperator body to scale", method: http.MethodPut, path: object + "/scale", contentType: jsonType, body: obj(target),
			wantCode: http.StatusBadRequest, wantMessage: "NginxOperator", unchanged: target},
		badInputCase{name: "merge patch to a negative scale", method: http.MethodPatch, path: object + "/scale", contentType: "application/merge-patch+json",
			body: []byte(`{"spec":{"replicas":-1}}`), wantCode: http.StatusUnprocessableEntity, wantField: "spec.replicas", unchanged: target},
		badInputCase{name: "malformed scale patch", method: http.MethodPatch, path: object + "/scale", contentType: "application/json-patch+json",
			body: []byte(`[{"op":`), wantCode: http.StatusBadRequest, wantMessage: "invalid JSON patch", unchanged: target},
	)
	if v.version == v1alpha1.SchemeGroupVersion.Version {
		// What v1alpha1 cannot express travels in an annotation that conversion parses;
		// one it cannot parse is refused by validation, whatever the verb.
		annotation := "metadata.annotations[" + operator.PreservedFieldsAnnotation + "]"
		corrupt := fmt.Sprintf(`{"apiVersion":%q,"kind":"NginxOperator","metadata":{"name":%%q,"annotations":{%q:"{not json"}}}`, apiVersion, operator.PreservedFieldsAnnotation)
		preserved := func(spec string) string {
			data, _ := json.Marshal(map[string]string{operator.PreservedFieldsAnnotation: `{"spec":` + spec + `}`})
			return string(data)
		}
		cases = append(cases,
			badInputCase{name: "corrupt preserved-fields annotation", method: http.MethodPost, contentType: jsonType,
				body:     []byte(fmt.Sprintf(corrupt, n("corrupt"))),
				wantCode: http.StatusUnprocessableEntity, wantField: annotation, absent: n("corrupt")},
			badInputCase{name: "update to a corrupt preserved-fields annotation", method: http.MethodPut, path: object, contentType: jsonType,
				body:     withAnnotation(current, operator.PreservedFieldsAnnotation, "{not json"),
				wantCode: http.StatusUnprocessableEntity, wantField: annotation, unchanged: target},
			badInputCase{name: "merge patch to a corrupt preserved-fields annotation", method: http.MethodPatch, path: object,
				contentType: "application/merge-patch+json",
				body:        []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"{not json"}}}`, operator.PreservedFieldsAnnotation)),
				wantCode:    http.StatusUnprocessableEntity, wantField: annotation, unchanged: target},
			// Server-side apply answered 500 here while conversion returned an error.
			badInputCase{name: "apply patch with a corrupt preserved-fields annotation", method: http.MethodPatch, path: object, query: "?fieldManager=badinput&force=true",
				contentType: "application/apply-patch+yaml", body: []byte(fmt.Sprintf(corrupt, target)),
				wantCode: http.StatusUnprocessableEntity, wantField: annotation, unchanged: target},
			// The status subresource keeps the stored metadata, but this annotation also
			// carries v1alpha2-only status fields: dropping an unreadable one would reset them.
			badInputCase{name: "status update with a corrupt preserved-fields annotation", method: http.MethodPut, path: object + "/status", contentType: jsonType,
				body:     withAnnotation(current, operator.PreservedFieldsAnnotation, "{not json"),
				wantCode: http.StatusUnprocessableEntity, wantField: annotation, unchanged: target},
			badInputCase{name: "status merge patch to a corrupt preserved-fields annotation", method: http.MethodPatch, path: object + "/status",
				contentType: "application/merge-patch+json",
				body:        []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"{not json"}}}`, operator.PreservedFieldsAnnotation)),
				wantCode:    http.StatusUnprocessableEntity, wantField: annotation, unchanged: target},
			badInputCase{name: "10000 ports in the preserved-fields annotation", method: http.MethodPost, contentType: jsonType,
				body:     []byte(fmt.Sprintf(`{"apiVersion":%q,"kind":"NginxOperator","metadata":{"name":%q,"annotations":%s}}`, apiVersion, n("many-ports"), preserved(manyPorts(10000)))),
				wantCode: http.StatusUnprocessableEntity, wantField: "spec.ports", absent: n("many-ports")},
		)
	}
	if v.version == v1alpha2.SchemeGroupVersion.Version {
		cases = append(cases,
			badInputCase{name: "10000 ports", method: http.MethodPost, contentType: jsonType, body: withSpec(n("many-ports"), manyPorts(10000)),
				wantCode: http.StatusUnprocessableEntity, wantField: "spec.ports", absent: n("many-ports")},
			badInputCase{name: "update to 10000 ports", method: http.MethodPut, path: object, contentType: jsonType, body: update(manyPorts(10000)),
				wantCode: http.StatusUnprocessableEntity, wantField: "spec.ports", unchanged: target},
		)
	}
	return cases
}

// object is a complete NginxOperator of the version as JSON.
func (v badInputVersion) object(name, spec string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"operator.example.com/%s","kind":"NginxOperator","metadata":{"name":%q},"spec":%s}`, v.version, name, spec))
}

func (v badInputVersion) read(t *testing.T, c *http.Client, collection, name string) *unstructured.Unstructured {
	t.Helper()
	code, _, body := send(t, c, http.MethodGet, collection+"/"+name, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", name, code, truncate(body))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	return u
}

func (v badInputVersion) list(t *testing.T, c *http.Client, collection string) []string {
	t.Helper()
	code, _, body := send(t, c, http.MethodGet, collection, "", nil)
	if code != http.StatusOK {
		t.Fatalf("LIST: %d %s", code, truncate(body))
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names
}

// send makes one request and reads the whole answer.
func send(t *testing.T, c *http.Client, method, url, contentType string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// assertStatus requires a failure Status with the case's code, message and field.
func assertStatus(t *testing.T, body []byte, tc badInputCase) {
	t.Helper()
	var status metav1.Status
	if err := json.Unmarshal(body, &status); err != nil || status.Kind != "Status" {
		t.Fatalf("answer is not a Status (%v): %s", err, truncate(body))
	}
	t.Logf("%s: %s", status.Reason, status.Message)
	if status.Status != metav1.StatusFailure || int(status.Code) != tc.wantCode || status.Message == "" || status.Reason == "" {
		t.Errorf("Status %+v; want a failure with code %d, a reason and a message", status, tc.wantCode)
	}
	if !strings.Contains(status.Message, tc.wantMessage) {
		t.Errorf("message %q does not say %q", status.Message, tc.wantMessage)
	}
	if tc.wantField == "" {
		return
	}
	if status.Details == nil {
		t.Fatalf("422 without details: %+v", status)
	}
	var fields []string
	for _, cause := range status.Details.Causes {
		fields = append(fields, cause.Field)
	}
	if !strings.Contains(strings.Join(fields, " "), tc.wantField) || !strings.Contains(status.Message, tc.wantField) {
		t.Errorf("causes %v and message %q do not name %s", fields, status.Message, tc.wantField)
	}
}

func assertReady(ctx context.Context, t *testing.T, s *server) {
	t.Helper()
	body, err := s.Client.RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil || string(body) != "ok" {
		t.Fatalf("not ready afterwards: %v %s", err, body)
	}
}

// requestCounts reads apiserver_request_total of our group from the server's /metrics,
// by label set. The counter is the process's: in-process servers share the metrics
// registry, so a test compares two readings (assertNo5xxSince), never totals.
func requestCounts(t *testing.T, c *http.Client, s *server) map[string]requestCount {
	t.Helper()
	code, _, body := send(t, c, http.MethodGet, s.URL("/metrics"), "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, truncate(body))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	family := families["apiserver_request_total"]
	if family == nil {
		t.Fatal("no apiserver_request_total in /metrics")
	}
	counts := map[string]requestCount{}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["group"] == "operator.example.com" {
			counts[fmt.Sprint(labels)] = requestCount{labels, m.GetCounter().GetValue()}
		}
	}
	return counts
}

type requestCount struct {
	labels map[string]string
	value  float64
}

// assertNo5xxSince reads the request counter again: no request to our group may have
// been answered with a 5xx since before was read, whatever the table asserted.
func assertNo5xxSince(t *testing.T, c *http.Client, s *server, before map[string]requestCount) {
	t.Helper()
	var ours, fiveHundreds float64
	for key, now := range requestCounts(t, c, s) {
		added := now.value - before[key].value
		ours += added
		if strings.HasPrefix(now.labels["code"], "5") && added > 0 {
			fiveHundreds += added
			t.Errorf("5xx answers: %v = %v", now.labels, added)
		}
	}
	t.Logf("apiserver_request_total for operator.example.com: %v requests, %v with a 5xx", ours, fiveHundreds)
	if ours == 0 {
		t.Error("no requests to operator.example.com counted: the scan would miss 5xx answers")
	}
}

// staleUpdate is the current object with a resourceVersion that is no longer current.
func staleUpdate(current *unstructured.Unstructured, stale string) []byte {
	u := current.DeepCopy()
	u.SetResourceVersion(stale)
	u.SetLabels(map[string]string{"lost": "update"})
	data, err := u.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return data
}

// withStatus is the current object with the status given as JSON.
func withStatus(current *unstructured.Unstructured, status string) []byte {
	u := current.DeepCopy()
	var parsed map[string]interface{}
	if err := json.Unmarshal([]byte(status), &parsed); err != nil {
		panic(err)
	}
	u.Object["status"] = parsed
	data, err := u.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return data
}

// withAnnotation is the current object with one more annotation.
func withAnnotation(current *unstructured.Unstructured, key, value string) []byte {
	u := current.DeepCopy()
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	u.SetAnnotations(annotations)
	data, err := u.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return data
}

// yamlAliasBomb is the "billion laughs": nine levels of nine aliases each, 9^9 strings
// once expanded, in a few hundred bytes.
func yamlAliasBomb(apiVersion, name string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: NginxOperator\nmetadata:\n  name: %s\n", apiVersion, name)
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for level := 'b'; level <= 'i'; level++ {
		prev := string(level - 1)
		fmt.Fprintf(&b, "%c: &%c [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", level, level, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	b.WriteString("spec:\n  forceRedeploy: *i\n")
	return []byte(b.String())
}

// deeplyNested puts depth nested arrays into an unknown spec field.
func deeplyNested(apiVersion, name string, depth int) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":%q,"kind":"NginxOperator","metadata":{"name":%q},"spec":{"nested":%s%s}}`,
		apiVersion, name, strings.Repeat("[", depth), strings.Repeat("]", depth)))
}

// oversized is a valid object one byte over the body limit.
func oversized(apiVersion, name string) []byte {
	head := fmt.Sprintf(`{"apiVersion":%q,"kind":"NginxOperator","metadata":{"name":%q,"annotations":{"big":"`, apiVersion, name)
	tail := `"}}}`
	return []byte(head + strings.Repeat("x", maxRequestBodyBytes+1-len(head)-len(tail)) + tail)
}

// manyPorts is a v1alpha2 spec with n distinct, individually valid ports.
func manyPorts(n int) string {
	ports := make([]string, n)
	for i := range ports {
		ports[i] = fmt.Sprintf(`{"name":"p%d","containerPort":%d}`, i, i+1)
	}
	return `{"image":"nginx:1.27","replicas":1,"ports":[` + strings.Join(ports, ",") + `]}`
}

func equalSpecs(a, b *unstructured.Unstructured) bool {
	aj, _ := json.Marshal(a.Object["spec"])
	bj, _ := json.Marshal(b.Object["spec"])
	return bytes.Equal(aj, bj)
}

func truncate(body []byte) string {
	if len(body) > 600 {
		return string(body[:600]) + "..."
	}
	return string(body)
}
