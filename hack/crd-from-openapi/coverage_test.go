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
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestEveryOpenAPIFieldIsInTheCRD walks our OpenAPI definitions and the CRD schema on their
// own and compares the field paths they describe, so no field is lost or invented.
func TestEveryOpenAPIFieldIsInTheCRD(t *testing.T) {
	defs := definitions()
	want := map[string]string{}
	openAPIFields(t, defs, spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(refPrefix + v1alpha2.NginxOperator{}.OpenAPIModelName())}}, "", want)

	crd, err := buildCRD()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	crdFields(*crd.Spec.Versions[0].Schema.OpenAPIV3Schema, "", got)

	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("field paths and types: OpenAPI (-) and CRD (+) differ:\n%s", diff)
	}
	for _, path := range []string{".spec.image", ".spec.ports[].containerPort", ".spec.env[].valueFrom.fileKeyRef.optional",
		".spec.resources.limits{}", ".spec.service.ports[].nodePort", ".spec.qps.totalQPS", ".status.conditions[].lastTransitionTime", ".status.realQPS"} {
		if _, ok := got[path]; !ok {
			t.Errorf("%s missing; the walk found %d paths: %s", path, len(got), strings.Join(sortedKeys(got), " "))
		}
	}
}

// openAPIFields records every path below a schema with its type; well-known types
// (wellknown.go) are recorded as what a CRD makes of them, since their definitions
// describe a Go struct, not the JSON.
func openAPIFields(t *testing.T, defs map[string]common.OpenAPIDefinition, s spec.Schema, path string, out map[string]string) {
	t.Helper()
	if name, ok := reference(s); ok {
		if props, known := wellKnownType(name); known {
			out[path] = crdType(props)
			return
		}
		def, found := defs[name]
		if !found {
			t.Fatalf("%s: no definition %s", path, name)
		}
		openAPIFields(t, defs, def.Schema, path, out)
		return
	}
	out[path] = strings.Join(s.Type, ",")
	for name, prop := range s.Properties {
		openAPIFields(t, defs, prop, path+"."+name, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		openAPIFields(t, defs, *s.Items.Schema, path+"[]", out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		openAPIFields(t, defs, *s.AdditionalProperties.Schema, path+"{}", out)
	}
}

func crdFields(s apiextensionsv1.JSONSchemaProps, path string, out map[string]string) {
	out[path] = crdType(s)
	for name, prop := range s.Properties {
		crdFields(prop, path+"."+name, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		crdFields(*s.Items.Schema, path+"[]", out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		crdFields(*s.AdditionalProperties.Schema, path+"{}", out)
	}
}

func crdType(s apiextensionsv1.JSONSchemaProps) string {
	if s.XIntOrString {
		return "int-or-string"
	}
	return s.Type
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
