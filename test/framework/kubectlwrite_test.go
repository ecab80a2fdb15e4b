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
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseWrite(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *writeRequest // nil: kubectl itself answers
	}{
		{[]string{"create", "namespace", "e2e"}, &writeRequest{verb: "create-namespace", args: []string{"e2e"}, wait: true}},
		{[]string{"create", "-f", "-", "-n", "ns", "--as", "alice"}, &writeRequest{verb: "create", filename: "-", namespace: "ns", as: "alice", wait: true}},
		{[]string{"create", "--dry-run=server", "-f", "-"}, &writeRequest{verb: "create", filename: "-", dryRun: true, wait: true}},
		{[]string{"create", "-f", "-", "--dry-run=none"}, &writeRequest{verb: "create", filename: "-", wait: true}},
		{[]string{"apply", "-n", "ns", "-f", "-"}, &writeRequest{verb: "apply", filename: "-", namespace: "ns", wait: true}},
		{[]string{"delete", "namespace", "e2e", "--wait=false"}, &writeRequest{verb: "delete", args: []string{"namespace", "e2e"}}},
		{[]string{"-n", "ns", "delete", "ngx/a", "cm/b", "--ignore-not-found", "--timeout=3m"},
			&writeRequest{verb: "delete", namespace: "ns", args: []string{"ngx/a", "cm/b"}, ignoreMissing: true, wait: true, timeout: 3 * time.Minute}},
		{[]string{"wait", "--for=condition=Ready", "--timeout=5m", "ngx/web"},
			&writeRequest{verb: "wait", args: []string{"ngx/web"}, wait: true, timeout: 5 * time.Minute, condition: "Ready", status: "True"}},
		{[]string{"wait", "-nns", "--for", "condition=Stalled=False", "ngx", "a", "b"},
			&writeRequest{verb: "wait", namespace: "ns", args: []string{"ngx", "a", "b"}, wait: true, timeout: 30 * time.Second, condition: "Stalled", status: "False"}},
		{[]string{"patch", "ngx", "a", "-n", "ns", "--as", "bob", "--type=merge", "-p", `{"spec":{}}`},
			&writeRequest{verb: "patch", namespace: "ns", as: "bob", args: []string{"ngx", "a"}, patchType: "merge", patch: `{"spec":{}}`, wait: true}},
		{[]string{"patch", "ngx/a", "--subresource", "status", "-p", "{}"},
			&writeRequest{verb: "patch", args: []string{"ngx/a"}, subresource: "status", patch: "{}", wait: true}},
		{[]string{"scale", "ngx", "a", "--replicas", "3"}, &writeRequest{verb: "scale", args: []string{"ngx", "a"}, replicas: 3, wait: true}},
		{[]string{"scale", "-n", "ns", "statefulset/etcd", "--replicas=0"}, &writeRequest{verb: "scale", namespace: "ns", args: []string{"statefulset/etcd"}, wait: true}},
		{[]string{"label", "ngx", "a", "team=a", "e2e.example.com/old-", "--overwrite"},
			&writeRequest{verb: "label", args: []string{"ngx", "a"}, labels: []string{"team=a", "e2e.example.com/old-"}, overwrite: true, wait: true}},
		{[]string{"create", "role", "r", "-n", "ns", "--verb=get,list", "--resource=pods", "--resource", "ngx/status"},
			&writeRequest{verb: "create-role", namespace: "ns", args: []string{"r"}, verbs: []string{"get,list"}, resources: []string{"pods", "ngx/status"}, wait: true}},
		{[]string{"create", "rolebinding", "b", "--clusterrole=view", "--user=u", "--group", "g", "--serviceaccount=ns:sa"},
			&writeRequest{verb: "create-rolebinding", args: []string{"b"}, clusterRole: "view", users: []string{"u"}, groups: []string{"g"}, serviceAccounts: []string{"ns:sa"}, wait: true}},
		{[]string{"auth", "can-i", "create", "ngx", "--subresource=rollback", "--as", "w"},
			&writeRequest{verb: "can-i", args: []string{"create", "ngx"}, subresource: "rollback", as: "w", wait: true}},
		// kubectl's own: other verbs and flags, files, selectors, whole types, other waits.
		{[]string{"create", "-f", "manifest.yaml"}, nil},
		{[]string{"create", "--dry-run=client", "-f", "-"}, nil},
		{[]string{"create", "--dry-run", "-f", "-"}, nil},
		{[]string{"create", "-f", "-", "-o", "name"}, nil},
		{[]string{"create", "role", "r", "--verb", "get"}, nil},
		{[]string{"create", "rolebinding", "b", "--role=r", "--clusterrole=c", "--user=u"}, nil},
		{[]string{"create", "rolebinding", "b", "--user=u"}, nil},
		{[]string{"auth", "can-i", "get", "/healthz"}, nil},
		{[]string{"auth", "can-i", "--list"}, nil},
		{[]string{"patch", "ngx", "a", "b", "-p", "{}"}, nil},
		{[]string{"patch", "ngx", "a", "-p", "{}", "--dry-run=server"}, nil},
		{[]string{"patch", "ngx", "a", "--type=merge"}, nil},
		{[]string{"scale", "ngx", "a", "--replicas=-1"}, nil},
		{[]string{"scale", "ngx", "a", "--replicas=2", "--current-replicas=1"}, nil},
		{[]string{"scale", "ngx", "a", "b", "--replicas=2"}, nil},
		{[]string{"label", "ngx", "a"}, nil},
		{[]string{"label", "ngx", "a", "b", "k=v"}, nil},
		{[]string{"label", "ngx", "--all", "k=v"}, nil},
		{[]string{"delete", "ngx", "a", "--replicas=1"}, nil},
		{[]string{"create", "namespace"}, nil},
		{[]string{"apply", "-f", "manifest.yaml"}, nil},
		{[]string{"apply", "--server-side", "-f", "-"}, nil},
		{[]string{"apply", "-f", "-", "--prune", "-l", "a=b"}, nil},
		{[]string{"delete", "-f", "-"}, nil},
		{[]string{"delete", "ngx", "--all"}, nil},
		{[]string{"delete", "ngx", "-l", "a=b"}, nil},
		{[]string{"delete", "ngx"}, nil},
		{[]string{"delete", "ngx,cm", "a"}, nil},
		{[]string{"delete", "ngx", "cm/a"}, nil},
		{[]string{"delete", "ngx", "a", "--grace-period=0", "--force"}, nil},
		{[]string{"delete", "ngx", "a", "--timeout=soon"}, nil},
		{[]string{"wait", "--for=delete", "ngx/a"}, nil},
		{[]string{"wait", "--for=jsonpath={.status.phase}=Running", "pod/a"}, nil},
		{[]string{"wait", "--for=condition=Ready", "ngx", "--all"}, nil},
		{[]string{"wait", "--for=condition=Ready", "-l", "a=b", "ngx"}, nil},
	} {
		checkParse(t, parseWrite, tc.args, tc.want)
	}
}

func TestConditionMet(t *testing.T) {
	object := func(generation int64, conditions ...map[string]any) *unstructured.Unstructured {
		list := make([]any, 0, len(conditions))
		for _, c := range conditions {
			list = append(list, c)
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"generation": generation},
			"status":   map[string]any{"conditions": list},
		}}
	}
	ready := func(status string, observed int64) map[string]any {
		return map[string]any{"type": "Ready", "status": status, "observedGeneration": observed}
	}
	for _, tc := range []struct {
		name              string
		obj               *unstructured.Unstructured
		condition, status string
		want              bool
	}{
		{"met", object(2, ready("True", 2)), "Ready", "True", true},
		{"names and statuses in any case", object(2, ready("true", 2)), "ready", "True", true},
		{"another status", object(2, ready("False", 2)), "Ready", "True", false},
		{"a status asked for", object(2, ready("False", 2)), "Ready", "False", true},
		{"an older generation's", object(3, ready("True", 2)), "Ready", "True", false},
		{"no such condition", object(1, ready("True", 1)), "Available", "True", false},
		{"no conditions", object(1), "Ready", "True", false},
		{"without observedGeneration", object(5, map[string]any{"type": "Ready", "status": "True"}), "Ready", "True", true},
	} {
		if got := conditionMet(tc.obj, tc.condition, tc.status); got != tc.want {
			t.Errorf("%s: conditionMet = %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestStaleMapping(t *testing.T) {
	gr := schema.GroupResource{Group: "crd.operator.example.com", Resource: "nginxoperators"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"an object missing", apierrors.NewNotFound(gr, "web"), false},
		{"the resource not served", apierrors.NewGenericServerResponse(404, "delete", gr, "web", "", 0, false), true},
		{"another answer", apierrors.NewForbidden(gr, "web", errors.New("no")), false},
		{"no error", nil, false},
	} {
		if got := staleMapping(tc.err); got != tc.want {
			t.Errorf("%s (%v): staleMapping = %t, want %t", tc.name, tc.err, got, tc.want)
		}
	}
}
