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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// shippedAuditPolicy is the ConfigMap artifacts/deploy mounts as --audit-policy-file.
const shippedAuditPolicy = "../../artifacts/deploy/31-apiserver-audit-policy.yaml"

// TestShippedAuditPolicyLogsWritesWithBodiesAndReadsAsMetadata runs the apiserver with
// the audit policy artifacts/deploy ships and checks what the log then holds.
func TestShippedAuditPolicyLogsWritesWithBodiesAndReadsAsMetadata(t *testing.T) {
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policyFile, []byte(policyFromConfigMap(t, shippedAuditPolicy)), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "audit.log")
	s := startServer(t, dir, "--audit-policy-file", policyFile, "--audit-log-path", logFile, "--audit-log-format", "json")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := s.Client.OperatorV1alpha2().NginxOperators(ns)
	obj := &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "audited"}, Spec: v1alpha2.NginxOperatorSpec{Image: "nginx:audited-1.27"}}
	if _, err := client.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(ctx, "audited", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}

	var create, get *auditv1.Event
	var events []auditv1.Event
	framework.WaitFor(t, 30*time.Second, "the create and the get in the audit log", func() bool {
		events = readAuditEvents(t, logFile)
		create, get = nil, nil
		for i := range events {
			e := &events[i]
			if e.ObjectRef == nil || e.ObjectRef.Resource != "nginxoperators" || e.ObjectRef.Name != "audited" || e.Stage != auditv1.StageResponseComplete {
				continue
			}
			switch e.Verb {
			case "create":
				create = e
			case "get":
				get = e
			}
		}
		return create != nil && get != nil
	})
	t.Logf("%d audit events in the log", len(events))

	if create.Level != auditv1.LevelRequest || create.RequestObject == nil || create.ResponseObject != nil {
		t.Errorf("create: level %s, request body %t, response body %t; want Request, with the request body only",
			create.Level, create.RequestObject != nil, create.ResponseObject != nil)
	} else if !bytes.Contains(create.RequestObject.Raw, []byte("nginx:audited-1.27")) {
		t.Errorf("create's request body lacks the spec that was sent: %s", create.RequestObject.Raw)
	}
	if create.User.Username == "" || create.ResponseStatus == nil || create.ResponseStatus.Code != 201 {
		t.Errorf("create: user %q, response status %+v; want the caller and 201", create.User.Username, create.ResponseStatus)
	}
	if get.Level != auditv1.LevelMetadata || get.RequestObject != nil || get.ResponseObject != nil {
		t.Errorf("get: level %s, request body %t, response body %t; want Metadata without bodies",
			get.Level, get.RequestObject != nil, get.ResponseObject != nil)
	}
	t.Logf("create audited at %s by %q, get at %s", create.Level, create.User.Username, get.Level)
	for _, e := range events {
		// The harness polls /readyz until the server is ready; the policy drops probes.
		if strings.HasPrefix(e.RequestURI, "/readyz") || strings.HasPrefix(e.RequestURI, "/livez") || strings.HasPrefix(e.RequestURI, "/healthz") {
			t.Errorf("a probe was audited: %s %s", e.Verb, e.RequestURI)
		}
		if e.Stage == auditv1.StageRequestReceived {
			t.Errorf("stage RequestReceived is logged (%s %s), the policy omits it", e.Verb, e.RequestURI)
		}
	}
}

// policyFromConfigMap returns data["policy.yaml"] of the ConfigMap in file.
func policyFromConfigMap(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(data, &cm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	policy, ok := cm.Data["policy.yaml"]
	if cm.Kind != "ConfigMap" || !ok {
		t.Fatalf("%s: a %s without data[policy.yaml]", file, cm.Kind)
	}
	return policy
}

// readAuditEvents decodes the JSON lines the log backend has written so far.
func readAuditEvents(t *testing.T, file string) []auditv1.Event {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []auditv1.Event
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var e auditv1.Event
		// The last line may be half written.
		if json.Unmarshal(scanner.Bytes(), &e) == nil {
			events = append(events, e)
		}
	}
	return events
}
