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

package controller

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// What kube-apiserver answers to a pod template with a bad downward-API reference.
func refusedDeployment(name string) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, name, field.ErrorList{
		field.NotSupported(field.NewPath("spec", "template", "spec", "containers").Index(0).Child("env").Index(0).Child("valueFrom", "fieldRef", "fieldPath"),
			"not.a.field", []string{"metadata.name", "metadata.namespace"}),
	})
}

// What kube-apiserver answers when a requested nodePort belongs to another Service.
func refusedService(name string) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "ports").Index(0).Child("nodePort"), 30123, "provided port is already allocated"),
	})
}

func (h *harness) condition(name, typ string) *metav1.Condition {
	h.t.Helper()
	no := &v1alpha2.NginxOperator{}
	h.get(name, no)
	c := apimeta.FindStatusCondition(no.Status.Conditions, typ)
	if c == nil {
		h.t.Fatalf("no %s condition in %+v", typ, no.Status.Conditions)
	}
	return c
}

func TestReconcileReportsARefusedDeployment(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.refuse("Deployment", refusedDeployment("web"))
	failedBefore := reconcileCount("operand_failed")

	writes, err := h.reconcileFailing("web")
	if !apierrors.IsInvalid(err) {
		t.Errorf("returned %v, want the server's Invalid error", err)
	}
	// The Service does not wait for the Deployment, and the status is written anyway.
	if got := strings.Join(writes, ","); got != "apply Deployment,apply Service,update status" {
		t.Errorf("writes = %q", got)
	}
	degraded := h.condition("web", v1alpha2.ConditionOperatorDegraded)
	if degraded.Status != metav1.ConditionTrue || degraded.Reason != v1alpha2.ReasonOperandDeploymentFailed ||
		!strings.Contains(degraded.Message, `Deployment.apps "web" is invalid`) || !strings.Contains(degraded.Message, "not.a.field") {
		t.Errorf("OperatorDegraded = %+v", degraded)
	}
	if c := h.condition("web", v1alpha2.ConditionAvailable); c.Status != metav1.ConditionFalse || c.Reason != v1alpha2.ReasonOperandDeploymentFailed {
		t.Errorf("Available = %+v; no Deployment serves", c)
	}
	if got := reconcileCount("operand_failed") - failedBefore; got != 1 {
		t.Errorf("nginx_operator_reconciles_total{result=operand_failed} grew by %v, want 1", got)
	}

	// A retry that meets the same refusal tries the apply again but rewrites nothing.
	if writes, _ := h.reconcileFailing("web"); strings.Join(writes, ",") != "apply Deployment" {
		t.Errorf("retry wrote %q, want only the apply attempt", writes)
	}

	// Once the server accepts it, the condition clears on the next retry.
	h.refuse("Deployment", nil)
	if got := strings.Join(h.reconcile("web"), ","); got != "apply Deployment,update status" {
		t.Errorf("recovery wrote %q", got)
	}
	if c := h.condition("web", v1alpha2.ConditionOperatorDegraded); c.Reason != v1alpha2.ReasonOperandDeploymentNotAvailable {
		t.Errorf("after recovery OperatorDegraded = %+v, want the rollout to be reported", c)
	}
}

func TestReconcileKeepsAvailableWhenAnUpdateIsRefused(t *testing.T) {
	h := newHarness(t, sample("web"))
	h.reconcile("web")
	h.deploymentAvailable("web", 2)
	h.reconcile("web")

	// A new image that an admission policy denies: the old pods keep serving.
	no := &v1alpha2.NginxOperator{}
	h.get("web", no)
	no.Spec.Image = "registry.invalid/refused:1"
	if err := h.client.Update(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	policy := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", nil)
	policy.ErrStatus.Message = `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'deny' with binding 'deny' denied request: image refused`
	h.refuse("Deployment", policy)
	_, _ = h.reconcileFailing("web")

	if c := h.condition("web", v1alpha2.ConditionAvailable); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "2 pods") {
		t.Errorf("Available = %+v; the previous Deployment still serves 2 pods", c)
	}
	if c := h.condition("web", v1alpha2.ConditionProgressing); c.Status != metav1.ConditionFalse || c.Reason != v1alpha2.ReasonOperandDeploymentFailed {
		t.Errorf("Progressing = %+v", c)
	}
	if c := h.condition("web", v1alpha2.ConditionOperatorDegraded); c.Status != metav1.ConditionTrue || c.Reason != v1alpha2.ReasonOperandDeploymentFailed || !strings.Contains(c.Message, "image refused") {
		t.Errorf("OperatorDegraded = %+v", c)
	}
}

func TestReconcileReportsARefusedService(t *testing.T) {
	no := sample("web")
	no.Spec.Service = &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeNodePort, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80, NodePort: ptr.To[int32](30123)}}}
	h := newHarness(t, no)
	h.refuse("Service", refusedService("web"))

	writes, err := h.reconcileFailing("web")
	if !apierrors.IsInvalid(err) {
		t.Errorf("returned %v, want the server's Invalid error", err)
	}
	if got := strings.Join(writes, ","); got != "apply Deployment,apply Service,update status" {
		t.Errorf("writes = %q", got)
	}

	// The Deployment becomes available: Available says so although the Service is missing.
	h.deploymentAvailable("web", 2)
	_, _ = h.reconcileFailing("web")
	if c := h.condition("web", v1alpha2.ConditionAvailable); c.Status != metav1.ConditionTrue {
		t.Errorf("Available = %+v; the Deployment serves", c)
	}
	degraded := h.condition("web", v1alpha2.ConditionOperatorDegraded)
	if degraded.Status != metav1.ConditionTrue || degraded.Reason != v1alpha2.ReasonOperandServiceFailed || !strings.Contains(degraded.Message, "provided port is already allocated") {
		t.Errorf("OperatorDegraded = %+v", degraded)
	}

	h.refuse("Service", nil)
	h.reconcile("web")
	if c := h.condition("web", v1alpha2.ConditionOperatorDegraded); c.Status != metav1.ConditionFalse {
		t.Errorf("after the port was freed OperatorDegraded = %+v", c)
	}
}

func TestReconcileCountsOnlyExistingNginxOperators(t *testing.T) {
	h := newHarness(t, sample("web"))
	before := reconcileCount("")
	h.reconcile("unrelated")
	if got := reconcileCount(""); got != before {
		t.Errorf("a request for a missing NginxOperator counted: %v -> %v", before, got)
	}
	h.reconcile("web")
	if got := reconcileCount("success"); got < 1 {
		t.Errorf("nginx_operator_reconciles_total{result=success} = %v", got)
	}
	if got := reconcileCount(""); got != before+1 {
		t.Errorf("one reconcile of an existing NginxOperator counted %v times", got-before)
	}
}

func TestConditionMessagesFitTheAPI(t *testing.T) {
	huge := strings.Repeat("é", maxMessageLength) // two bytes each
	st := ComputeStatus(sample("web"), Observation{ServiceFailure: huge}, metav1.Now())
	c := apimeta.FindStatusCondition(st.Conditions, v1alpha2.ConditionOperatorDegraded)
	if len(c.Message) > maxMessageLength || !strings.HasPrefix(huge, c.Message) {
		t.Errorf("message of %d bytes, want at most %d and a whole-rune prefix", len(c.Message), maxMessageLength)
	}
}
