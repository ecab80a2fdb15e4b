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

package validation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// validObject is what defaulting produces for a typical NodePort NginxOperator.
func validObject() *operator.NginxOperator {
	return &operator.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
		Spec: operator.NginxOperatorSpec{
			Image:    "nginx:1.27.4",
			Replicas: ptr.To[int32](2),
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP},
				{Name: "https", ContainerPort: 443, Protocol: corev1.ProtocolTCP},
			},
			Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			},
			Service: &operator.ServiceSpec{
				Type:  operator.ServiceTypeNodePort,
				Ports: []operator.ServicePort{{Name: "http", Port: 80, NodePort: ptr.To[int32](30080)}, {Name: "https", Port: 443}},
			},
		},
	}
}

func TestValidateNginxOperator(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(o *operator.NginxOperator)
		// want lists "type field" of every expected error; empty means valid.
		want []string
	}{
		{name: "valid", mutate: func(o *operator.NginxOperator) {}},
		{name: "valid qps mode", mutate: func(o *operator.NginxOperator) {
			o.Spec.Replicas = nil
			o.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 800, TotalQPS: 0}
		}},
		{name: "valid zero replicas", mutate: func(o *operator.NginxOperator) { o.Spec.Replicas = ptr.To[int32](0) }},
		{name: "name not a DNS-1035 label", mutate: func(o *operator.NginxOperator) { o.Name = "1web" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "name with dots", mutate: func(o *operator.NginxOperator) { o.Name = "web.example" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "namespace required", mutate: func(o *operator.NginxOperator) { o.Namespace = "" },
			want: []string{"FieldValueRequired metadata.namespace"}},
		{name: "reserved annotation", mutate: func(o *operator.NginxOperator) {
			o.Annotations = map[string]string{operator.PreservedFieldsAnnotation: "{}"}
		}, want: []string{"FieldValueForbidden metadata.annotations[operator.example.com/v1alpha2-fields]"}},
		{name: "image empty", mutate: func(o *operator.NginxOperator) { o.Spec.Image = "" },
			want: []string{"FieldValueRequired spec.image"}},
		{name: "image whitespace", mutate: func(o *operator.NginxOperator) { o.Spec.Image = " nginx" },
			want: []string{"FieldValueInvalid spec.image"}},
		{name: "negative replicas", mutate: func(o *operator.NginxOperator) { o.Spec.Replicas = ptr.To[int32](-1) },
			want: []string{"FieldValueInvalid spec.replicas"}},
		{name: "replicas with qps", mutate: func(o *operator.NginxOperator) {
			o.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 1, TotalQPS: 1}
		}, want: []string{"FieldValueForbidden spec.replicas"}},
		{name: "singlePodQPS zero", mutate: func(o *operator.NginxOperator) {
			o.Spec.Replicas = nil
			o.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 0, TotalQPS: 10}
		}, want: []string{"FieldValueInvalid spec.qps.singlePodQPS"}},
		{name: "totalQPS negative", mutate: func(o *operator.NginxOperator) {
			o.Spec.Replicas = nil
			o.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 10, TotalQPS: -1}
		}, want: []string{"FieldValueInvalid spec.qps.totalQPS"}},
		{name: "no ports", mutate: func(o *operator.NginxOperator) { o.Spec.Ports = nil; o.Spec.Service.Ports = nil },
			want: []string{"FieldValueRequired spec.ports", "FieldValueRequired spec.service.ports"}},
		{name: "port zero", mutate: func(o *operator.NginxOperator) { o.Spec.Ports[0].ContainerPort = 0 },
			want: []string{"FieldValueInvalid spec.ports[0].containerPort"}},
		{name: "port too high", mutate: func(o *operator.NginxOperator) { o.Spec.Ports[1].ContainerPort = 65536 },
			want: []string{"FieldValueInvalid spec.ports[1].containerPort"}},
		{name: "port name missing", mutate: func(o *operator.NginxOperator) {
			o.Spec.Ports[1].Name = ""
			o.Spec.Service.Ports = o.Spec.Service.Ports[:1]
		},
			want: []string{"FieldValueRequired spec.ports[1].name"}},
		{name: "port name invalid", mutate: func(o *operator.NginxOperator) {
			o.Spec.Ports[1].Name = "https_"
			o.Spec.Service.Ports = o.Spec.Service.Ports[:1]
		},
			want: []string{"FieldValueInvalid spec.ports[1].name"}},
		{name: "duplicate port name", mutate: func(o *operator.NginxOperator) {
			o.Spec.Ports[1].Name = "http"
			o.Spec.Service.Ports = o.Spec.Service.Ports[:1]
		},
			want: []string{"FieldValueDuplicate spec.ports[1].name"}},
		{name: "duplicate port number", mutate: func(o *operator.NginxOperator) { o.Spec.Ports[1].ContainerPort = 80 },
			want: []string{"FieldValueDuplicate spec.ports[1].containerPort"}},
		{name: "same number other protocol", mutate: func(o *operator.NginxOperator) {
			o.Spec.Ports[1].ContainerPort = 80
			o.Spec.Ports[1].Protocol = corev1.ProtocolUDP
		}},
		{name: "bad protocol", mutate: func(o *operator.NginxOperator) { o.Spec.Ports[0].Protocol = "HTTP" },
			want: []string{"FieldValueNotSupported spec.ports[0].protocol"}},
		{name: "bad hostPort", mutate: func(o *operator.NginxOperator) { o.Spec.Ports[0].HostPort = 70000 },
			want: []string{"FieldValueInvalid spec.ports[0].hostPort"}},
		{name: "env name invalid", mutate: func(o *operator.NginxOperator) { o.Spec.Env[0].Name = "A=B" },
			want: []string{"FieldValueInvalid spec.env[0].name"}},
		{name: "env name missing", mutate: func(o *operator.NginxOperator) { o.Spec.Env[0].Name = "" },
			want: []string{"FieldValueRequired spec.env[0].name"}},
		{name: "env duplicate", mutate: func(o *operator.NginxOperator) { o.Spec.Env = append(o.Spec.Env, o.Spec.Env[0]) },
			want: []string{"FieldValueDuplicate spec.env[1].name"}},
		{name: "env value and valueFrom", mutate: func(o *operator.NginxOperator) {
			o.Spec.Env[0].ValueFrom = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}
		}, want: []string{"FieldValueInvalid spec.env[0].valueFrom"}},
		{name: "env valueFrom without source", mutate: func(o *operator.NginxOperator) {
			o.Spec.Env[0].Value = ""
			o.Spec.Env[0].ValueFrom = &corev1.EnvVarSource{}
		}, want: []string{"FieldValueInvalid spec.env[0].valueFrom"}},
		{name: "env secret ref without key", mutate: func(o *operator.NginxOperator) {
			o.Spec.Env[0].Value = ""
			o.Spec.Env[0].ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}
		}, want: []string{"FieldValueRequired spec.env[0].valueFrom.secretKeyRef.key"}},
		{name: "requests above limits", mutate: func(o *operator.NginxOperator) {
			o.Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}, want: []string{"FieldValueInvalid spec.resources.requests[cpu]"}},
		{name: "negative limit", mutate: func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("-1Mi")
		}, want: []string{"FieldValueInvalid spec.resources.limits[memory]"}},
		{name: "unknown resource name", mutate: func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["gpu"] = resource.MustParse("1")
		}, want: []string{"FieldValueInvalid spec.resources.limits[gpu]"}},
		{name: "extended resource", mutate: func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["example.com/gpu"] = resource.MustParse("1")
		}},
		{name: "env resourceFieldRef unknown", mutate: func(o *operator.NginxOperator) {
			o.Spec.Env[0].Value = ""
			o.Spec.Env[0].ValueFrom = &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.gpu"}}
		}, want: []string{"FieldValueNotSupported spec.env[0].valueFrom.resourceFieldRef.resource"}},
		{name: "env fileKeyRef", mutate: func(o *operator.NginxOperator) {
			o.Spec.Env[0].Value = ""
			o.Spec.Env[0].ValueFrom = &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "v", Path: "p", Key: "k"}}
		}, want: []string{"FieldValueForbidden spec.env[0].valueFrom.fileKeyRef"}},
		{name: "resource claims", mutate: func(o *operator.NginxOperator) {
			o.Spec.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		}, want: []string{"FieldValueForbidden spec.resources.claims"}},
		{name: "service type unknown", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Type = "ExternalName" },
			want: []string{"FieldValueNotSupported spec.service.type", "FieldValueForbidden spec.service.ports[0].nodePort"}},
		{name: "nodePort with ClusterIP", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Type = operator.ServiceTypeClusterIP },
			want: []string{"FieldValueForbidden spec.service.ports[0].nodePort"}},
		{name: "nodePort with LoadBalancer", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Type = operator.ServiceTypeLoadBalancer }},
		{name: "nodePort out of range", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports[0].NodePort = ptr.To[int32](8080) },
			want: []string{"FieldValueInvalid spec.service.ports[0].nodePort"}},
		{name: "nodePort duplicate", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports[1].NodePort = ptr.To[int32](30080) },
			want: []string{"FieldValueDuplicate spec.service.ports[1].nodePort"}},
		{name: "service port to unknown container port", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports[1].Name = "metrics" },
			want: []string{"FieldValueNotFound spec.service.ports[1].name"}},
		{name: "service port name missing", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports[1].Name = "" },
			want: []string{"FieldValueRequired spec.service.ports[1].name"}},
		{name: "service port duplicate name", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports[1].Name = "http" },
			want: []string{"FieldValueDuplicate spec.service.ports[1].name"}},
		{name: "service port number invalid", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports[1].Port = 0 },
			want: []string{"FieldValueInvalid spec.service.ports[1].port"}},
		{name: "service port number duplicate", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports[1].Port = 80 },
			want: []string{"FieldValueDuplicate spec.service.ports[1].port"}},
		{name: "service ports empty", mutate: func(o *operator.NginxOperator) { o.Spec.Service.Ports = nil },
			want: []string{"FieldValueRequired spec.service.ports"}},
		{name: "100 ports", mutate: func(o *operator.NginxOperator) { setPorts(o, MaxPorts) }},
		{name: "too many ports", mutate: func(o *operator.NginxOperator) { setPorts(o, 10000) },
			want: []string{"FieldValueTooMany spec.ports", "FieldValueTooMany spec.service.ports"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			tc.mutate(o)
			assertErrors(t, ValidateNginxOperator(o), tc.want)
		})
	}
}

// setPorts gives o n distinct container ports, each exposed by the Service.
func setPorts(o *operator.NginxOperator, n int) {
	o.Spec.Ports, o.Spec.Service.Ports = nil, nil
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		o.Spec.Ports = append(o.Spec.Ports, corev1.ContainerPort{Name: name, ContainerPort: int32(1 + i), Protocol: corev1.ProtocolTCP})
		o.Spec.Service.Ports = append(o.Spec.Service.Ports, operator.ServicePort{Name: name, Port: int32(1 + i)})
	}
}

func TestValidateNginxOperatorUpdate(t *testing.T) {
	old := validObject()
	changed := validObject()
	changed.Spec.Ports[0].ContainerPort = 8080
	assertErrors(t, ValidateNginxOperatorUpdate(changed, old), nil)

	renamed := validObject()
	renamed.Name = "other"
	assertErrors(t, ValidateNginxOperatorUpdate(renamed, old), []string{"FieldValueInvalid metadata.name"})

	invalid := validObject()
	invalid.Spec.Replicas = ptr.To[int32](-3)
	assertErrors(t, ValidateNginxOperatorUpdate(invalid, old), []string{"FieldValueInvalid spec.replicas"})
}

func TestValidateNginxOperatorStatusUpdate(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name   string
		status operator.NginxOperatorStatus
		want   []string
	}{
		{name: "valid", status: operator.NginxOperatorStatus{
			ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, Selector: "app=web", RealQPS: ptr.To[int64](1600),
			Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: "OperatorSucceeded", LastTransitionTime: now}},
		}},
		{name: "negative counters", status: operator.NginxOperatorStatus{ObservedGeneration: -1, Replicas: -1, RealQPS: ptr.To[int64](-5)},
			want: []string{"FieldValueInvalid status.observedGeneration", "FieldValueInvalid status.replicas", "FieldValueInvalid status.realQPS"}},
		{name: "ready above replicas", status: operator.NginxOperatorStatus{Replicas: 1, ReadyReplicas: 2, AvailableReplicas: 2},
			want: []string{"FieldValueInvalid status.readyReplicas"}},
		{name: "available above ready", status: operator.NginxOperatorStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 2},
			want: []string{"FieldValueInvalid status.availableReplicas"}},
		{name: "bad selector", status: operator.NginxOperatorStatus{Selector: "app in (("},
			want: []string{"FieldValueInvalid status.selector"}},
		{name: "bad condition", status: operator.NginxOperatorStatus{Conditions: []metav1.Condition{{Type: "Available", Status: "Maybe", Reason: "bad reason", LastTransitionTime: now}}},
			want: []string{"FieldValueNotSupported status.conditions[0].status", "FieldValueInvalid status.conditions[0].reason"}},
		{name: "duplicate condition", status: operator.NginxOperatorStatus{Conditions: []metav1.Condition{
			{Type: "Available", Status: metav1.ConditionTrue, Reason: "A", LastTransitionTime: now},
			{Type: "Available", Status: metav1.ConditionFalse, Reason: "B", LastTransitionTime: now},
		}}, want: []string{"FieldValueDuplicate status.conditions[1]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validObject()
			o := validObject()
			o.Status = tc.status
			assertErrors(t, ValidateNginxOperatorStatusUpdate(o, old), tc.want)
		})
	}
}

func assertErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	got := make([]string, 0, len(errs))
	for _, err := range errs {
		got = append(got, string(err.Type)+" "+err.Field)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n got: %q\nwant: %q\nfull: %v", got, want, errs.ToAggregate())
	}
}
