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
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

// A cluster administrator's admission configuration applies to NginxOperators as it does
// to a CRD's objects: our apiserver runs the generic apiserver's admission plugins, which
// read ValidatingAdmissionPolicies, MutatingAdmissionPolicies and webhook configurations
// from kube-apiserver (informers, so a change takes effect a moment later) and call the
// webhooks themselves. Each test creates its configuration in kube-apiserver, scoped to a
// namespace of its own, waits until our apiserver enforces it, checks create and update
// through the aggregation layer with kubectl and the generated clientset, then deletes it
// and checks that it no longer applies. Our apiserver runs on loopback in this stack, so
// the webhook servers the tests run on 127.0.0.1 are reachable from it (kube-apiserver
// only proxies these requests; it does not admit them).

// admissionEnforced is how long our apiserver's informers may take to see a change.
const admissionEnforced = time.Minute

const nginxOperatorRules = `{apiGroups: [operator.example.com], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [nginxoperators]}`

// admissionNamespace creates a namespace for one test, deleted at its end, and returns
// the namespaceSelector that matches only it.
func admissionNamespace(t *testing.T, ns string) string {
	t.Helper()
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--wait=false") })
	return fmt.Sprintf("{matchLabels: {kubernetes.io/metadata.name: %s}}", ns)
}

// applyAdmissionConfig creates configuration objects in kube-apiserver and deletes them at
// the end of the test if the test has not.
func applyAdmissionConfig(t *testing.T, manifest string) {
	t.Helper()
	t.Cleanup(func() { kubectl(t, manifest, "delete", "--ignore-not-found", "-f", "-") })
	mustKubectl(t, manifest, "create", "-f", "-")
}

// ngxManifest is an NginxOperator in v1alpha2; labels is a YAML flow mapping or "".
func ngxManifest(ns, name string, replicas int, labels string) string {
	if labels == "" {
		labels = "{}"
	}
	return fmt.Sprintf("apiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: %s, namespace: %s, labels: %s}\nspec: {replicas: %d}\n",
		name, ns, labels, replicas)
}

// warnings collects the Warning headers the Go client receives.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns the warnings received since the last call.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.list
	w.list = nil
	return list
}

// admissionClient is the generated clientset as the stack's admin, through kube-apiserver.
func admissionClient(t *testing.T) (clientset.Interface, *warnings) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", adminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	w := &warnings{}
	cfg.WarningHandler = w
	ops, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ops, w
}

func newNginxOperator(ns, name string, replicas int32) *v1alpha2.NginxOperator {
	return &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1alpha2.NginxOperatorSpec{Replicas: ptr.To(replicas)},
	}
}

// updateNginxOperator reads an NginxOperator, changes it and writes it back with an
// update (PUT), retrying on conflicts (the controller writes its status meanwhile).
func updateNginxOperator(ctx context.Context, t *testing.T, ops clientset.Interface, ns, name string, change func(*v1alpha2.NginxOperator)) (*v1alpha2.NginxOperator, error) {
	t.Helper()
	client := ops.OperatorV1alpha2().NginxOperators(ns)
	for {
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s/%s: %v", ns, name, err)
		}
		change(obj)
		updated, err := client.Update(ctx, obj, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) && ctx.Err() == nil {
			continue
		}
		return updated, err
	}
}

// statusCode is the HTTP status of an API error, 0 for another error.
func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}

// TestClusterAdmissionValidatingAdmissionPolicy: a ValidatingAdmissionPolicy with a CEL
// rule on spec.replicas, bound with Deny for the test's namespace, refuses creates and
// updates with 422 and the policy's message; a second policy bound with Warn lets them
// through with a warning; objects of other namespaces are not judged; once deleted,
// neither applies.
func TestClusterAdmissionValidatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	const (
		ns      = "e2e-admission-vap"
		denyMsg = "e2e policy: an NginxOperator runs at most 5 replicas"
		warnMsg = "e2e policy: more than 3 replicas is unusual"
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	selector := admissionNamespace(t, ns)
	ops, warned := admissionClient(t)
	client := ops.OperatorV1alpha2().NginxOperators(ns)
	policy := func(name, expression, message, action string) string {
		return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %[1]s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [%[2]s]
  validations:
  - expression: %[3]q
    message: %[4]q
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [%[5]s]
  matchResources: {namespaceSelector: %[6]s}
`, name, nginxOperatorRules, expression, message, action, selector)
	}
	config := policy("e2e-ngx-at-most-5-replicas", "!has(object.spec.replicas) || object.spec.replicas <= 5", denyMsg, "Deny") +
		"---\n" + policy("e2e-ngx-warn-above-3-replicas", "!has(object.spec.replicas) || object.spec.replicas <= 3", warnMsg, "Warn")
	applyAdmissionConfig(t, config)

	// Each policy and binding reaches our apiserver's admission on its own: wait for both.
	took := framework.WaitFor(t, admissionEnforced, "our apiserver to enforce both ValidatingAdmissionPolicies", func() bool {
		_, denied, err := kubectl(t, ngxManifest(ns, "probe", 6, ""), "create", "--dry-run=server", "-f", "-")
		if err == nil || !strings.Contains(denied, denyMsg) {
			return false
		}
		_, warning, err := kubectl(t, ngxManifest(ns, "probe", 4, ""), "create", "--dry-run=server", "-f", "-")
		return err == nil && strings.Contains(warning, warnMsg)
	})
	framework.Measure(t, "cluster-admission").Duration("validating-policy-enforced", took, "ValidatingAdmissionPolicies enforced after they were created")
	t.Logf("policies enforced %s after they were created", framework.Describe(took))

	// Create, kubectl: 422 with the policy's message.
	_, errOut, err := kubectl(t, ngxManifest(ns, "too-many", 6, ""), "create", "-f", "-")
	if err == nil || !strings.Contains(errOut, "is invalid") || !strings.Contains(errOut, denyMsg) {
		t.Errorf("kubectl create with 6 replicas: %v %s; want Invalid with %q", err, errOut, denyMsg)
	}
	// Create, Go client: 422 Invalid.
	_, err = client.Create(ctx, newNginxOperator(ns, "too-many", 6), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || statusCode(err) != 422 || !strings.Contains(err.Error(), denyMsg) {
		t.Errorf("create with 6 replicas (clientset): %v (code %d); want 422 Invalid with %q", err, statusCode(err), denyMsg)
	}
	// The deprecated version: apiVersions "*" matches it too.
	v1alpha1 := strings.Replace(ngxManifest(ns, "too-many", 6, ""), "v1alpha2", "v1alpha1", 1)
	_, errOut, err = kubectl(t, v1alpha1, "create", "-f", "-")
	if err == nil || !strings.Contains(errOut, "is invalid") || !strings.Contains(errOut, denyMsg) {
		t.Errorf("kubectl create of v1alpha1 with 6 replicas: %v %s; want Invalid with %q", err, errOut, denyMsg)
	}
	// Warn: accepted, with the policy's message as a warning.
	_, errOut, err = kubectl(t, ngxManifest(ns, "unusual", 4, ""), "create", "-f", "-")
	if err != nil || !strings.Contains(errOut, "Warning:") || !strings.Contains(errOut, warnMsg) {
		t.Errorf("kubectl create with 4 replicas: %v %q; want it accepted with a warning %q", err, errOut, warnMsg)
	}
	warned.take()
	if _, err := client.Create(ctx, newNginxOperator(ns, "within", 2), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create with 2 replicas: %v", err)
	}
	if w := warned.take(); len(w) != 0 {
		t.Errorf("create with 2 replicas warned %q", w)
	}

	// Update, Go client (PUT) and kubectl (PATCH).
	_, err = updateNginxOperator(ctx, t, ops, ns, "within", func(o *v1alpha2.NginxOperator) { o.Spec.Replicas = ptr.To[int32](6) })
	if !apierrors.IsInvalid(err) || statusCode(err) != 422 || !strings.Contains(err.Error(), denyMsg) {
		t.Errorf("update to 6 replicas (clientset): %v (code %d); want 422 Invalid with %q", err, statusCode(err), denyMsg)
	}
	_, errOut, err = kubectl(t, "", "patch", "ngx", "within", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":6}}`)
	if err == nil || !strings.Contains(errOut, "is invalid") || !strings.Contains(errOut, denyMsg) {
		t.Errorf("kubectl patch to 6 replicas: %v %s; want Invalid with %q", err, errOut, denyMsg)
	}
	if _, err := updateNginxOperator(ctx, t, ops, ns, "within", func(o *v1alpha2.NginxOperator) { o.Spec.Replicas = ptr.To[int32](4) }); err != nil {
		t.Errorf("update to 4 replicas (clientset): %v", err)
	}
	// One warning per response; a retry after a conflict with the controller's status
	// write gets its own.
	if w := warned.take(); len(w) == 0 || slices.ContainsFunc(w, func(s string) bool { return !strings.Contains(s, warnMsg) }) {
		t.Errorf("update to 4 replicas warned %q; want %q", w, warnMsg)
	}
	_, errOut, err = kubectl(t, "", "scale", "ngx", "unusual", "-n", ns, "--replicas=3")
	if err != nil {
		t.Errorf("kubectl scale to 3: %v %s", err, errOut)
	}
	_, errOut, err = kubectl(t, "", "patch", "ngx", "unusual", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":5}}`)
	if err != nil || !strings.Contains(errOut, warnMsg) {
		t.Errorf("kubectl patch to 5 replicas: %v %q; want it accepted with a warning %q", err, errOut, warnMsg)
	}
	if got := get(t, "get", "ngx", "unusual", "-n", ns, "-o", "jsonpath={.spec.replicas}"); got != "5" {
		t.Errorf("stored replicas after the warned patch = %q, want 5", got)
	}

	// The binding's namespaceSelector: another namespace is not judged.
	if _, errOut, err := kubectl(t, ngxManifest("default", "other-namespace", 6, ""), "create", "--dry-run=server", "-f", "-"); err != nil || strings.Contains(errOut, warnMsg) {
		t.Errorf("create with 6 replicas in namespace default: %v %q; the policies are bound to %s only", err, errOut, ns)
	}

	mustKubectl(t, config, "delete", "-f", "-")
	took = framework.WaitFor(t, admissionEnforced, "our apiserver to stop enforcing the deleted policies", func() bool {
		_, errOut, err := kubectl(t, ngxManifest(ns, "probe", 6, ""), "create", "--dry-run=server", "-f", "-")
		return err == nil && !strings.Contains(errOut, warnMsg)
	})
	framework.Measure(t, "cluster-admission").Duration("validating-policy-released", took, "ValidatingAdmissionPolicies no longer applied after they were deleted")
	t.Logf("policies no longer applied %s after they were deleted", framework.Describe(took))
	if _, errOut, err := kubectl(t, ngxManifest(ns, "too-many", 6, ""), "create", "-f", "-"); err != nil {
		t.Errorf("kubectl create with 6 replicas without the policy: %v %s", err, errOut)
	}
	warned.take()
	if _, err := updateNginxOperator(ctx, t, ops, ns, "within", func(o *v1alpha2.NginxOperator) { o.Spec.Replicas = ptr.To[int32](7) }); err != nil {
		t.Errorf("update to 7 replicas without the policy: %v", err)
	}
	if w := warned.take(); len(w) != 0 {
		t.Errorf("update without the policy warned %q", w)
	}
}

// TestClusterAdmissionMutatingAdmissionPolicy: a MutatingAdmissionPolicy (GA and on by
// default in Kubernetes 1.36, admissionregistration.k8s.io/v1) whose ApplyConfiguration sets
// a label is applied on create and update, in the stored object; once it is deleted, the
// label can be removed.
func TestClusterAdmissionMutatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	const (
		ns    = "e2e-admission-map"
		label = "e2e.example.com/mutated-by-policy"
	)
	labelPath := "jsonpath={.metadata.labels." + strings.ReplaceAll(label, ".", `\.`) + "}"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	selector := admissionNamespace(t, ns)
	ops, _ := admissionClient(t)
	client := ops.OperatorV1alpha2().NginxOperators(ns)
	config := fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: e2e-ngx-label}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules: [%[1]s]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"%[2]s": "true"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: e2e-ngx-label}
spec:
  policyName: e2e-ngx-label
  matchResources: {namespaceSelector: %[3]s}
`, nginxOperatorRules, label, selector)
	applyAdmissionConfig(t, config)

	took := framework.WaitFor(t, admissionEnforced, "our apiserver to apply the MutatingAdmissionPolicy", func() bool {
		out, _, err := kubectl(t, ngxManifest(ns, "probe", 1, ""), "create", "--dry-run=server", "-f", "-", "-o", labelPath)
		return err == nil && out == "true"
	})
	framework.Measure(t, "cluster-admission").Duration("mutating-policy-applied", took, "a MutatingAdmissionPolicy applied after it was created")
	t.Logf("policy applied %s after it was created", framework.Describe(took))

	// Create: kubectl and the clientset; the stored objects carry the label.
	mustKubectl(t, ngxManifest(ns, "by-kubectl", 1, ""), "create", "-f", "-")
	created, err := client.Create(ctx, newNginxOperator(ns, "by-client", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create (clientset): %v", err)
	}
	if created.Labels[label] != "true" {
		t.Errorf("created object's labels %v, want %s=true", created.Labels, label)
	}
	for _, name := range []string{"by-kubectl", "by-client"} {
		if got := get(t, "get", "ngx", name, "-n", ns, "-o", labelPath); got != "true" {
			t.Errorf("stored %s has %s=%q, want true", name, label, got)
		}
	}

	// Update: removing or changing the label does not stick.
	updated, err := updateNginxOperator(ctx, t, ops, ns, "by-client", func(o *v1alpha2.NginxOperator) {
		o.Labels[label] = "false"
		o.Spec.Replicas = ptr.To[int32](2)
	})
	if err != nil {
		t.Fatalf("update (clientset): %v", err)
	}
	if updated.Labels[label] != "true" || *updated.Spec.Replicas != 2 {
		t.Errorf("updated object: labels %v, replicas %d; want %s=true and 2", updated.Labels, *updated.Spec.Replicas, label)
	}
	mustKubectl(t, "", "label", "ngx", "by-kubectl", "-n", ns, label+"-")
	for _, name := range []string{"by-kubectl", "by-client"} {
		if got := get(t, "get", "ngx", name, "-n", ns, "-o", labelPath); got != "true" {
			t.Errorf("stored %s after the update has %s=%q, want true", name, label, got)
		}
	}

	mustKubectl(t, config, "delete", "-f", "-")
	took = framework.WaitFor(t, admissionEnforced, "our apiserver to stop applying the deleted policy", func() bool {
		out, _, err := kubectl(t, ngxManifest(ns, "probe", 1, ""), "create", "--dry-run=server", "-f", "-", "-o", labelPath)
		return err == nil && out == ""
	})
	framework.Measure(t, "cluster-admission").Duration("mutating-policy-released", took, "a MutatingAdmissionPolicy no longer applied after it was deleted")
	t.Logf("policy no longer applied %s after it was deleted", framework.Describe(took))
	mustKubectl(t, "", "label", "ngx", "by-kubectl", "-n", ns, label+"-")
	if got := get(t, "get", "ngx", "by-kubectl", "-n", ns, "-o", labelPath); got != "" {
		t.Errorf("stored by-kubectl without the policy has %s=%q, want none", label, got)
	}
	if _, err := client.Create(ctx, newNginxOperator(ns, "after", 1), metav1.CreateOptions{}); err != nil {
		t.Errorf("create without the policy: %v", err)
	}
	if got := get(t, "get", "ngx", "after", "-n", ns, "-o", labelPath); got != "" {
		t.Errorf("stored object created without the policy has %s=%q, want none", label, got)
	}
}

// webhookServer is an admission webhook served by the test process on 127.0.0.1 over
// TLS, with a certificate of a CA made for the test.
type webhookServer struct {
	url      string // https://127.0.0.1:<port>
	caBundle string // base64 PEM, for clientConfig.caBundle
	srv      *http.Server
	mu       sync.Mutex
	requests []*admissionv1.AdmissionRequest
}

// testCA returns a new CA and its certificate in PEM.
func testCA(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	ca, err := framework.NewCA("nginx-operator e2e webhook CA")
	if err != nil {
		t.Fatal(err)
	}
	return ca, framework.CertPEM(ca)
}

// startWebhookServer listens on a free loopback port, then serves AdmissionReviews with
// review until the test ends or stop is called.
func startWebhookServer(t *testing.T, review func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *webhookServer {
	t.Helper()
	ca, caPEM := testCA(t)
	leaf, err := framework.IssueCertificate(&ca, "127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, x509.ExtKeyUsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &webhookServer{url: "https://" + ln.Addr().String(), caBundle: base64.StdEncoding.EncodeToString(caPEM)}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, in.Request)
		s.mu.Unlock()
		response := review(in.Request)
		if response == nil { // hang: answer nothing until the caller gives up
			<-r.Context().Done()
			return
		}
		response.UID = in.Request.UID
		out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: response}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})}
	go func() {
		_ = s.srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12}))
	}()
	t.Cleanup(s.stop)
	return s
}

// stop closes the listener and every connection.
func (s *webhookServer) stop() { _ = s.srv.Close() }

// seen returns the requests received so far.
func (s *webhookServer) seen() []*admissionv1.AdmissionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*admissionv1.AdmissionRequest(nil), s.requests...)
}

// webhookConfig is a webhook configuration of kind (Validating or Mutating) with one
// webhook for NginxOperators in the namespace selector.
func webhookConfig(kind, name, url, caBundle, failurePolicy, selector string) string {
	reinvocation := ""
	if kind == "Mutating" {
		reinvocation = "\n  reinvocationPolicy: Never"
	}
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %[1]sWebhookConfiguration
metadata: {name: %[2]s}
webhooks:
- name: %[2]s.e2e.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: %[5]s
  timeoutSeconds: 2
  matchPolicy: Equivalent%[7]s
  clientConfig: {url: "%[3]s", caBundle: %[4]s}
  rules: [%[6]s]
  namespaceSelector: %[8]s
`, kind, name, url, caBundle, failurePolicy, nginxOperatorRules, reinvocation, selector)
}

// checkWebhookSaw fails the test unless the webhook was asked about operation on
// nginxoperators by the requesting user.
func checkWebhookSaw(t *testing.T, s *webhookServer, operation admissionv1.Operation, user string) {
	t.Helper()
	for _, r := range s.seen() {
		if r.Operation == operation && r.Resource.Group == "operator.example.com" && r.Resource.Resource == "nginxoperators" &&
			r.UserInfo.Username == user {
			return
		}
	}
	t.Errorf("the webhook was not asked about %s of nginxoperators by %q", operation, user)
}

// kubectlUser is the admin's user name as the cluster knows it.
func kubectlUser(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(mustKubectl(t, "", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
}

// TestClusterAdmissionValidatingWebhook: a ValidatingWebhookConfiguration whose webhook
// (served by the test) refuses NginxOperators with a particular label; the webhook's
// message reaches the user on create and update, kubectl and clientset alike, and once
// the configuration is deleted the same objects are accepted.
func TestClusterAdmissionValidatingWebhook(t *testing.T) {
	t.Parallel()
	const (
		ns   = "e2e-admission-vwh"
		deny = "e2e.example.com/deny"
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	selector := admissionNamespace(t, ns)
	ops, _ := admissionClient(t)
	client := ops.OperatorV1alpha2().NginxOperators(ns)
	message := func(op admissionv1.Operation, name string) string {
		return fmt.Sprintf("e2e webhook refuses %s of %q: it is labelled %s", op, name, deny)
	}
	s := startWebhookServer(t, func(r *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var obj metav1.PartialObjectMetadata
		if err := json.Unmarshal(r.Object.Raw, &obj); err != nil {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: 400, Message: err.Error()}}
		}
		if _, ok := obj.Labels[deny]; ok {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden, Message: message(r.Operation, r.Name)}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	config := webhookConfig("Validating", "e2e-ngx-deny", s.url+"/validate", s.caBundle, "Fail", selector)
	applyAdmissionConfig(t, config)
	denied := "{" + deny + ": \"yes\"}"

	took := framework.WaitFor(t, admissionEnforced, "our apiserver to call the validating webhook", func() bool {
		_, errOut, err := kubectl(t, ngxManifest(ns, "probe", 1, denied), "create", "--dry-run=server", "-f", "-")
		return err != nil && strings.Contains(errOut, message(admissionv1.Create, "probe"))
	})
	framework.Measure(t, "cluster-admission").Duration("validating-webhook-called", took, "a validating webhook called after its configuration was created")
	t.Logf("webhook called %s after its configuration was created", framework.Describe(took))

	_, errOut, err := kubectl(t, ngxManifest(ns, "marked", 1, denied), "create", "-f", "-")
	if err == nil || !strings.Contains(errOut, `admission webhook "e2e-ngx-deny.e2e.example.com" denied the request`) ||
		!strings.Contains(errOut, message(admissionv1.Create, "marked")) {
		t.Errorf("kubectl create of a labelled object: %v %s; want the webhook's refusal", err, errOut)
	}
	marked := newNginxOperator(ns, "marked", 1)
	marked.Labels = map[string]string{deny: "yes"}
	_, err = client.Create(ctx, marked, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), message(admissionv1.Create, "marked")) {
		t.Errorf("create of a labelled object (clientset): %v; want 403 with the webhook's message", err)
	}
	if _, err := client.Create(ctx, newNginxOperator(ns, "plain", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create of an unlabelled object: %v", err)
	}
	_, errOut, err = kubectl(t, "", "label", "ngx", "plain", "-n", ns, deny+"=yes")
	if err == nil || !strings.Contains(errOut, message(admissionv1.Update, "plain")) {
		t.Errorf("kubectl label: %v %s; want the webhook's refusal of the update", err, errOut)
	}
	_, err = updateNginxOperator(ctx, t, ops, ns, "plain", func(o *v1alpha2.NginxOperator) { o.Labels = map[string]string{deny: "yes"} })
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), message(admissionv1.Update, "plain")) {
		t.Errorf("update adding the label (clientset): %v; want 403 with the webhook's message", err)
	}
	if _, err := updateNginxOperator(ctx, t, ops, ns, "plain", func(o *v1alpha2.NginxOperator) { o.Spec.Replicas = ptr.To[int32](2) }); err != nil {
		t.Errorf("update without the label: %v", err)
	}
	user := kubectlUser(t)
	checkWebhookSaw(t, s, admissionv1.Create, user)
	checkWebhookSaw(t, s, admissionv1.Update, user)

	mustKubectl(t, config, "delete", "-f", "-")
	took = framework.WaitFor(t, admissionEnforced, "our apiserver to stop calling the deleted webhook", func() bool {
		_, _, err := kubectl(t, ngxManifest(ns, "probe", 1, denied), "create", "--dry-run=server", "-f", "-")
		return err == nil
	})
	framework.Measure(t, "cluster-admission").Duration("validating-webhook-released", took, "a validating webhook no longer called after its configuration was deleted")
	t.Logf("webhook no longer called %s after its configuration was deleted", framework.Describe(took))
	calls := len(s.seen())
	if _, errOut, err := kubectl(t, ngxManifest(ns, "marked", 1, denied), "create", "-f", "-"); err != nil {
		t.Errorf("kubectl create of a labelled object without the webhook: %v %s", err, errOut)
	}
	if _, errOut, err := kubectl(t, "", "label", "ngx", "plain", "-n", ns, deny+"=yes"); err != nil {
		t.Errorf("kubectl label without the webhook: %v %s", err, errOut)
	}
	if n := len(s.seen()); n != calls {
		t.Errorf("the webhook was called %d more times after its configuration was deleted", n-calls)
	}
}

// TestClusterAdmissionMutatingWebhook: a MutatingWebhookConfiguration whose webhook
// (served by the test) adds an annotation with a JSONPatch naming the operation; the
// stored object carries it after create and update, and once the configuration is
// deleted it is no longer set.
func TestClusterAdmissionMutatingWebhook(t *testing.T) {
	t.Parallel()
	const (
		ns         = "e2e-admission-mwh"
		annotation = "e2e.example.com/mutated-by-webhook"
	)
	annotationPath := "jsonpath={.metadata.annotations." + strings.ReplaceAll(annotation, ".", `\.`) + "}"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	selector := admissionNamespace(t, ns)
	ops, _ := admissionClient(t)
	client := ops.OperatorV1alpha2().NginxOperators(ns)
	s := startWebhookServer(t, func(r *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var obj metav1.PartialObjectMetadata
		if err := json.Unmarshal(r.Object.Raw, &obj); err != nil {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: 400, Message: err.Error()}}
		}
		op := map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{annotation: string(r.Operation)}}
		if obj.Annotations != nil {
			op = map[string]any{"op": "add", "path": "/metadata/annotations/" + strings.ReplaceAll(annotation, "/", "~1"), "value": string(r.Operation)}
		}
		patch, _ := json.Marshal([]any{op})
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
	})
	config := webhookConfig("Mutating", "e2e-ngx-annotate", s.url+"/mutate", s.caBundle, "Fail", selector)
	applyAdmissionConfig(t, config)

	took := framework.WaitFor(t, admissionEnforced, "our apiserver to call the mutating webhook", func() bool {
		out, _, err := kubectl(t, ngxManifest(ns, "probe", 1, ""), "create", "--dry-run=server", "-f", "-", "-o", annotationPath)
		return err == nil && out == "CREATE"
	})
	framework.Measure(t, "cluster-admission").Duration("mutating-webhook-called", took, "a mutating webhook called after its configuration was created")
	t.Logf("webhook called %s after its configuration was created", framework.Describe(took))

	mustKubectl(t, ngxManifest(ns, "by-kubectl", 1, ""), "create", "-f", "-")
	withAnnotations := newNginxOperator(ns, "by-client", 1)
	withAnnotations.Annotations = map[string]string{"team": "web"}
	created, err := client.Create(ctx, withAnnotations, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create (clientset): %v", err)
	}
	if created.Annotations[annotation] != "CREATE" || created.Annotations["team"] != "web" {
		t.Errorf("created object's annotations %v, want %s=CREATE and team=web", created.Annotations, annotation)
	}
	for _, name := range []string{"by-kubectl", "by-client"} {
		if got := get(t, "get", "ngx", name, "-n", ns, "-o", annotationPath); got != "CREATE" {
			t.Errorf("stored %s has %s=%q, want CREATE", name, annotation, got)
		}
	}

	updated, err := updateNginxOperator(ctx, t, ops, ns, "by-client", func(o *v1alpha2.NginxOperator) { o.Spec.Replicas = ptr.To[int32](2) })
	if err != nil {
		t.Fatalf("update (clientset): %v", err)
	}
	if updated.Annotations[annotation] != "UPDATE" {
		t.Errorf("updated object's annotations %v, want %s=UPDATE", updated.Annotations, annotation)
	}
	mustKubectl(t, "", "label", "ngx", "by-kubectl", "-n", ns, "tier=front")
	for _, name := range []string{"by-kubectl", "by-client"} {
		if got := get(t, "get", "ngx", name, "-n", ns, "-o", annotationPath); got != "UPDATE" {
			t.Errorf("stored %s after an update has %s=%q, want UPDATE", name, annotation, got)
		}
	}
	user := kubectlUser(t)
	checkWebhookSaw(t, s, admissionv1.Create, user)
	checkWebhookSaw(t, s, admissionv1.Update, user)

	mustKubectl(t, config, "delete", "-f", "-")
	took = framework.WaitFor(t, admissionEnforced, "our apiserver to stop calling the deleted webhook", func() bool {
		out, _, err := kubectl(t, ngxManifest(ns, "probe", 1, ""), "create", "--dry-run=server", "-f", "-", "-o", annotationPath)
		return err == nil && out == ""
	})
	framework.Measure(t, "cluster-admission").Duration("mutating-webhook-released", took, "a mutating webhook no longer called after its configuration was deleted")
	t.Logf("webhook no longer called %s after its configuration was deleted", framework.Describe(took))
	mustKubectl(t, "", "annotate", "ngx", "by-kubectl", "-n", ns, "--overwrite", annotation+"=by-hand")
	if got := get(t, "get", "ngx", "by-kubectl", "-n", ns, "-o", annotationPath); got != "by-hand" {
		t.Errorf("stored by-kubectl without the webhook has %s=%q, want by-hand", annotation, got)
	}
}

// TestClusterAdmissionWebhookUnavailable: with failurePolicy Fail, a webhook that is not
// there (connection refused) or does not answer refuses creates and updates with an
// error naming the webhook, within the configuration's timeoutSeconds (2 s) rather than
// the default 10 s; with failurePolicy Ignore the same requests go through.
func TestClusterAdmissionWebhookUnavailable(t *testing.T) {
	t.Parallel()
	const (
		ns          = "e2e-admission-whdown"
		webhookName = "e2e-ngx-unavailable"
		timeout     = 2 * time.Second
		// Well below the default timeout (10 s): the configuration's 2 s applies.
		atMost = 8 * time.Second
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	selector := admissionNamespace(t, ns)
	ops, _ := admissionClient(t)
	client := ops.OperatorV1alpha2().NginxOperators(ns)
	s := startWebhookServer(t, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	config := webhookConfig("Validating", webhookName, s.url+"/validate", s.caBundle, "Fail", selector)
	applyAdmissionConfig(t, config)
	took := framework.WaitFor(t, admissionEnforced, "our apiserver to call the webhook", func() bool {
		_, _, err := kubectl(t, ngxManifest(ns, "probe", 1, ""), "create", "--dry-run=server", "-f", "-")
		return err == nil && len(s.seen()) > 0
	})
	framework.Measure(t, "cluster-admission").Duration("failing-webhook-called", took, "a webhook that then fails called after its configuration was created")
	t.Logf("webhook called %s after its configuration was created", framework.Describe(took))
	if _, err := client.Create(ctx, newNginxOperator(ns, "existing", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create while the webhook answers: %v", err)
	}

	// refused checks that a create and an update are refused, in less than atMost, with
	// an error naming the webhook and saying why.
	refused := func(t *testing.T, why string, minimum time.Duration) {
		t.Helper()
		_, errOut, err := kubectl(t, ngxManifest(ns, "refused", 1, ""), "create", "-f", "-")
		if err == nil || !strings.Contains(errOut, `failed calling webhook "`+webhookName+`.e2e.example.com"`) || !strings.Contains(errOut, why) {
			t.Errorf("kubectl create: %v %s; want a refusal naming the webhook and %q", err, errOut, why)
		} else {
			t.Logf("kubectl create: %s", strings.TrimSpace(errOut))
		}
		start := time.Now()
		_, err = client.Create(ctx, newNginxOperator(ns, "refused", 1), metav1.CreateOptions{})
		tookCreate := time.Since(start)
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), webhookName) || !strings.Contains(err.Error(), why) {
			t.Errorf("create (clientset): %v; want 500 naming the webhook and %q", err, why)
		}
		start = time.Now()
		_, err = updateNginxOperator(ctx, t, ops, ns, "existing", func(o *v1alpha2.NginxOperator) { o.Spec.Replicas = ptr.To[int32](2) })
		tookUpdate := time.Since(start)
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), webhookName) || !strings.Contains(err.Error(), why) {
			t.Errorf("update (clientset): %v; want 500 naming the webhook and %q", err, why)
		}
		t.Logf("create refused in %s, update in %s", framework.Describe(tookCreate), framework.Describe(tookUpdate))
		for _, d := range []time.Duration{tookCreate, tookUpdate} {
			if d < minimum || d > atMost {
				t.Errorf("refused in %s; want between %s and %s", framework.Describe(d), minimum, atMost)
			}
		}
	}

	t.Run("stopped", func(t *testing.T) {
		s.stop()
		refused(t, "connection refused", 0)
	})

	t.Run("not answering", func(t *testing.T) {
		hanging := startWebhookServer(t, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse { return nil })
		mustKubectl(t, "", "patch", "validatingwebhookconfiguration", webhookName, "--type=json", "-p",
			fmt.Sprintf(`[{"op":"replace","path":"/webhooks/0/clientConfig","value":{"url":%q,"caBundle":%q}}]`, hanging.url+"/validate", hanging.caBundle))
		framework.WaitFor(t, admissionEnforced, "our apiserver to call the webhook that does not answer", func() bool {
			_, _, _ = kubectl(t, ngxManifest(ns, "probe", 1, ""), "create", "--dry-run=server", "-f", "-")
			return len(hanging.seen()) > 0
		})
		refused(t, "context deadline exceeded", timeout)
		hanging.stop()
	})

	t.Run("failurePolicy Ignore", func(t *testing.T) {
		mustKubectl(t, "", "patch", "validatingwebhookconfiguration", webhookName, "--type=json", "-p",
			`[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]`)
		took := framework.WaitFor(t, admissionEnforced, "our apiserver to ignore the failing webhook", func() bool {
			_, _, err := kubectl(t, ngxManifest(ns, "probe", 1, ""), "create", "--dry-run=server", "-f", "-")
			return err == nil
		})
		framework.Measure(t, "cluster-admission").Duration("ignore-applied", took, "failurePolicy Ignore applied after the patch")
		t.Logf("failurePolicy Ignore applied %s after the patch", framework.Describe(took))
		if _, errOut, err := kubectl(t, ngxManifest(ns, "ignored", 1, ""), "create", "-f", "-"); err != nil {
			t.Errorf("kubectl create with failurePolicy Ignore: %v %s", err, errOut)
		}
		if _, err := updateNginxOperator(ctx, t, ops, ns, "existing", func(o *v1alpha2.NginxOperator) { o.Spec.Replicas = ptr.To[int32](2) }); err != nil {
			t.Errorf("update with failurePolicy Ignore: %v", err)
		}
	})
}

var _ rest.WarningHandler = &warnings{}
