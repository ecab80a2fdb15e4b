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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// Each case is a container field that kube-apiserver would refuse in the Deployment,
// or a near miss it accepts. Before these rules the refused ones were stored and the
// controller failed to apply the Deployment.
func TestValidateContainerFieldsAsKubeAPIServer(t *testing.T) {
	fieldRef := func(apiVersion, path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: apiVersion, FieldPath: path}}
	}
	resourceRef := func(container, res, divisor string) *corev1.EnvVarSource {
		ref := &corev1.ResourceFieldSelector{ContainerName: container, Resource: res}
		if divisor != "" {
			ref.Divisor = resource.MustParse(divisor)
		}
		return &corev1.EnvVarSource{ResourceFieldRef: ref}
	}
	configMapRef := func(name, key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
	}
	secretRef := func(name, key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
	}
	const env0 = "spec.env[0].valueFrom."
	envCases := []struct {
		name string
		src  *corev1.EnvVarSource
		want []string
	}{
		{"fieldRef name, apiVersion defaulted", fieldRef("", "metadata.name"), nil},
		{"fieldRef podIP", fieldRef("v1", "status.podIP"), nil},
		{"fieldRef hostIPs", fieldRef("v1", "status.hostIPs"), nil},
		{"fieldRef legacy spec.host", fieldRef("v1", "spec.host"), nil},
		{"fieldRef label subscript", fieldRef("v1", "metadata.labels['app.kubernetes.io/name']"), nil},
		{"fieldRef annotation subscript in capitals", fieldRef("v1", "metadata.annotations['Example.com/Owner']"), nil},
		{"fieldRef unknown field", fieldRef("v1", "not.a.field"), []string{"FieldValueNotSupported " + env0 + "fieldRef.fieldPath"}},
		{"fieldRef all labels", fieldRef("v1", "metadata.labels"), []string{"FieldValueNotSupported " + env0 + "fieldRef.fieldPath"}},
		{"fieldRef pod field env cannot read", fieldRef("v1", "spec.restartPolicy"), []string{"FieldValueNotSupported " + env0 + "fieldRef.fieldPath"}},
		{"fieldRef bad label key", fieldRef("v1", "metadata.labels['bad key']"), []string{"FieldValueInvalid " + env0 + "fieldRef.fieldPath"}},
		{"fieldRef subscript on a scalar", fieldRef("v1", "status.podIP['x']"), []string{"FieldValueInvalid " + env0 + "fieldRef.fieldPath"}},
		{"fieldRef unknown apiVersion", fieldRef("v2", "metadata.name"), []string{"FieldValueNotSupported " + env0 + "fieldRef.apiVersion"}},
		{"fieldRef no path", fieldRef("v1", ""), []string{"FieldValueRequired " + env0 + "fieldRef.fieldPath"}},
		{"resourceFieldRef memory in Mi", resourceRef("", "requests.memory", "1Mi"), nil},
		{"resourceFieldRef own container", resourceRef("nginx", "limits.cpu", "1m"), nil},
		{"resourceFieldRef hugepages", resourceRef("", "limits.hugepages-2Mi", "1Ki"), nil},
		{"resourceFieldRef other container", resourceRef("sidecar", "limits.cpu", ""), []string{"FieldValueInvalid " + env0 + "resourceFieldRef.containerName"}},
		{"resourceFieldRef no resource", resourceRef("", "", ""), []string{"FieldValueRequired " + env0 + "resourceFieldRef.resource"}},
		{"resourceFieldRef cpu divisor in bytes", resourceRef("", "limits.cpu", "1Mi"), []string{"FieldValueNotSupported " + env0 + "resourceFieldRef.divisor"}},
		{"resourceFieldRef memory divisor in millis", resourceRef("", "limits.memory", "1m"), []string{"FieldValueNotSupported " + env0 + "resourceFieldRef.divisor"}},
		{"resourceFieldRef odd divisor", resourceRef("", "limits.memory", "2Mi"), []string{"FieldValueNotSupported " + env0 + "resourceFieldRef.divisor"}},
		{"configMapKeyRef", configMapRef("site-config", "nginx.conf"), nil},
		{"configMapKeyRef bad name", configMapRef("Site_Config", "nginx.conf"), []string{"FieldValueInvalid " + env0 + "configMapKeyRef.name"}},
		{"configMapKeyRef bad key", configMapRef("site-config", "conf/nginx"), []string{"FieldValueInvalid " + env0 + "configMapKeyRef.key"}},
		{"configMapKeyRef no name", configMapRef("", "k"), []string{"FieldValueRequired " + env0 + "configMapKeyRef.name"}},
		{"secretKeyRef", secretRef("tls", "tls.key"), nil},
		{"secretKeyRef dot-dot key", secretRef("tls", ".."), []string{"FieldValueInvalid " + env0 + "secretKeyRef.key"}},
		{"secretKeyRef name too long", secretRef(strings.Repeat("a", 254), "k"), []string{"FieldValueInvalid " + env0 + "secretKeyRef.name"}},
	}
	for _, tc := range envCases {
		t.Run("env "+tc.name, func(t *testing.T) {
			o := validObject()
			o.Spec.Env = []corev1.EnvVar{{Name: "X", ValueFrom: tc.src}}
			assertErrors(t, ValidateNginxOperator(o), tc.want)
		})
	}

	q := resource.MustParse
	otherCases := []struct {
		name   string
		mutate func(o *operator.NginxOperator)
		want   []string
	}{
		{"host port bound twice", func(o *operator.NginxOperator) {
			o.Spec.Ports[0].HostPort, o.Spec.Ports[1].HostPort = 8080, 8080
		}, []string{"FieldValueDuplicate spec.ports[1].hostPort"}},
		{"host port twice on other protocols", func(o *operator.NginxOperator) {
			o.Spec.Ports[0].HostPort, o.Spec.Ports[1].HostPort = 8080, 8080
			o.Spec.Ports[1].Protocol = corev1.ProtocolUDP
		}, nil},
		{"host port twice on other host IPs", func(o *operator.NginxOperator) {
			o.Spec.Ports[0].HostPort, o.Spec.Ports[1].HostPort = 8080, 8080
			o.Spec.Ports[0].HostIP, o.Spec.Ports[1].HostIP = "10.0.0.1", "10.0.0.2"
		}, nil},
		{"extended resource, request equals limit", func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["example.com/gpu"] = q("2")
			o.Spec.Resources.Requests["example.com/gpu"] = q("2")
		}, nil},
		{"extended resource fractional", func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["example.com/gpu"] = q("500m")
		}, []string{"FieldValueInvalid spec.resources.limits[example.com/gpu]"}},
		{"extended resource request without limit", func(o *operator.NginxOperator) {
			o.Spec.Resources.Requests["example.com/gpu"] = q("1")
		}, []string{"FieldValueRequired spec.resources.limits[example.com/gpu]"}},
		{"extended resource request below limit", func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["example.com/gpu"] = q("2")
			o.Spec.Resources.Requests["example.com/gpu"] = q("1")
		}, []string{"FieldValueInvalid spec.resources.requests[example.com/gpu]"}},
		{"extended resource named like a quota key", func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["requests.example.com/gpu"] = q("1")
		}, []string{"FieldValueInvalid spec.resources.limits[requests.example.com/gpu]"}},
		{"hugepages", func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["hugepages-2Mi"] = q("4Mi")
		}, nil},
		{"hugepages not a multiple of the page", func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["hugepages-2Mi"] = q("3Mi")
		}, []string{"FieldValueInvalid spec.resources.limits[hugepages-2Mi]"}},
		{"hugepages of no valid size", func(o *operator.NginxOperator) {
			o.Spec.Resources.Limits["hugepages-big"] = q("4Mi")
		}, []string{"FieldValueInvalid spec.resources.limits[hugepages-big]"}},
		{"hugepages without cpu or memory", func(o *operator.NginxOperator) {
			o.Spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"hugepages-2Mi": q("4Mi")}}
		}, []string{"FieldValueForbidden spec.resources"}},
	}
	for _, tc := range otherCases {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			tc.mutate(o)
			assertErrors(t, ValidateNginxOperator(o), tc.want)
		})
	}
}
