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

package main

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// quantityPattern is the pattern upstream CRD generators (controller-gen) give a
// resource.Quantity, so kube-apiserver refuses what resource.ParseQuantity would.
const quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

// wellKnownType returns the CRD schema of a type whose OpenAPI definition a CRD cannot
// take as it is: types with custom JSON marshalling are described by oneOf or by a type
// and format that only OpenAPI v2 understands, and a CRD must describe metadata as a bare
// object (kube-apiserver validates ObjectMeta itself). Their long type descriptions are
// left out; the fields that use them have their own.
func wellKnownType(model string) (apiextensionsv1.JSONSchemaProps, bool) {
	switch model {
	case intstr.IntOrString{}.OpenAPIModelName():
		return intOrString(""), true
	case resource.Quantity{}.OpenAPIModelName():
		return intOrString(quantityPattern), true
	case metav1.Time{}.OpenAPIModelName(), metav1.MicroTime{}.OpenAPIModelName():
		return apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time"}, true
	case metav1.Duration{}.OpenAPIModelName():
		return apiextensionsv1.JSONSchemaProps{Type: "string"}, true
	case metav1.ObjectMeta{}.OpenAPIModelName():
		return apiextensionsv1.JSONSchemaProps{Type: "object"}, true
	}
	return apiextensionsv1.JSONSchemaProps{}, false
}

// intOrString is the structural form of a value that is an integer or a string.
func intOrString(pattern string) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{
		XIntOrString: true,
		AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
		Pattern:      pattern,
	}
}
