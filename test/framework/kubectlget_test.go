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

package framework

import (
	"bytes"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParseGet(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *getRequest // nil: kubectl itself answers
	}{
		{[]string{"get", "ngx", "web", "-o", "jsonpath={.spec.replicas}"},
			&getRequest{output: "jsonpath={.spec.replicas}", resources: []string{"ngx", "web"}}},
		{[]string{"-n", "ns", "get", "pods", "-l", "app=web", "-ojson"},
			&getRequest{namespace: "ns", selector: "app=web", output: "json", resources: []string{"pods"}}},
		{[]string{"get", "--namespace=ns", "deploy/web", "svc/web", "--output=name", "--ignore-not-found"},
			&getRequest{namespace: "ns", output: "name", ignoreMissing: true, resources: []string{"deploy/web", "svc/web"}}},
		{[]string{"--as=alice", "--as-group", "g1", "--as-group=g2", "get", "events", "-A", "--field-selector", "reason=Failed", "-o", "yaml"},
			&getRequest{as: "alice", asGroups: []string{"g1", "g2"}, allNamespaces: true, fieldSelector: "reason=Failed", output: "yaml", resources: []string{"events"}}},
		{[]string{"get", "--raw", "/readyz"}, &getRequest{raw: "/readyz", resources: []string{}}},
		{[]string{"get", "-nkube-system", "-lk=v", "cm", "-o=name"},
			&getRequest{namespace: "kube-system", selector: "k=v", output: "name", resources: []string{"cm"}}},
		// kubectl's own: tables, watches, other verbs and flags, mixed or listed types, refusals.
		{[]string{"get", "ngx", "web"}, nil},
		{[]string{"get", "ngx", "-o", "wide"}, nil},
		{[]string{"get", "ngx", "-o", "custom-columns=N:.metadata.name"}, nil},
		{[]string{"get", "ngx", "-w", "-o", "name"}, nil},
		{[]string{"get", "ngx", "-o", "name", "--show-labels"}, nil},
		{[]string{"describe", "ngx", "web"}, nil},
		{[]string{"get", "ngx,svc", "-o", "name"}, nil},
		{[]string{"get", "ngx", "ngx/web", "-o", "name"}, nil},
		{[]string{"get", "ngx", "web", "-A", "-o", "name"}, nil},
		{[]string{"get", "ngx/web", "-l", "a=b", "-o", "name"}, nil},
		{[]string{"get", "-o", "name"}, nil},
		{[]string{"get", "--raw", "/readyz", "-o", "json"}, nil},
		{[]string{"get", "ngx", "-o"}, nil},
		{[]string{"get", "ngx", "-o", "jsonpath={.spec"}, nil},
	} {
		checkParse(t, parseGet, tc.args, tc.want)
	}
}

// checkParse checks what parse makes of args: want, or nil when kubectl must answer them.
func checkParse[R any](t *testing.T, parse func([]string) (R, bool), args []string, want *R) {
	t.Helper()
	got, ok := parse(args)
	switch {
	case want == nil && ok:
		t.Errorf("%q: answered in process as %+v; kubectl must answer it", args, got)
	case want != nil && !ok:
		t.Errorf("%q: left to kubectl; want %+v", args, *want)
	case want != nil && !reflect.DeepEqual(got, *want):
		t.Errorf("%q:\n got %+v\nwant %+v", args, got, *want)
	}
}

func TestPrintObjects(t *testing.T) {
	obj := func(name string) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operator.example.com/v1alpha2", "kind": "NginxOperator",
			"metadata": map[string]any{"name": name, "managedFields": []any{map[string]any{"manager": "m"}}},
			"spec":     map[string]any{"replicas": int64(2)},
		}}
		return u
	}
	for _, tc := range []struct {
		output string
		items  []unstructured.Unstructured
		single bool
		want   string
	}{
		{"name", []unstructured.Unstructured{obj("a"), obj("b")}, false,
			"nginxoperator.operator.example.com/a\nnginxoperator.operator.example.com/b\n"},
		{"jsonpath={.spec.replicas}", []unstructured.Unstructured{obj("a")}, true, "2"},
		{"jsonpath={.items[*].metadata.name}", []unstructured.Unstructured{obj("a"), obj("b")}, false, "a b"},
		{"jsonpath={.items[*].metadata.name}", nil, false, ""},
		{"jsonpath={.spec.missing}", []unstructured.Unstructured{obj("a")}, true, ""},
		{"jsonpath={.metadata.managedFields[0].manager}", []unstructured.Unstructured{obj("a")}, true, "m"},
		{"yaml", []unstructured.Unstructured{obj("a")}, true,
			"apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata:\n  name: a\nspec:\n  replicas: 2\n"},
		{"json", nil, false, "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"},
	} {
		var out bytes.Buffer
		if err := printObjects(&out, tc.output, tc.items, tc.single); err != nil {
			t.Errorf("%s: %v", tc.output, err)
			continue
		}
		if out.String() != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.output, out.String(), tc.want)
		}
	}
	if err := printObjects(&bytes.Buffer{}, "jsonpath={.spec", []unstructured.Unstructured{obj("a")}, true); err == nil {
		t.Error("an unclosed template was printed")
	}
}
