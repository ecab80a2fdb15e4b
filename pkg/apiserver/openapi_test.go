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

package apiserver

import (
	"testing"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/apis/operator/validation"
	"github.com/example/nginx-operator/pkg/generated/openapi"
)

// The published schema (kubectl explain, client-side validation, the bench CRD) must
// announce the same list limits that validation enforces.
func TestOpenAPIAnnouncesThePortLimit(t *testing.T) {
	defs := openapi.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) })
	for _, c := range []struct{ definition, property string }{
		{v1alpha2.NginxOperatorSpec{}.OpenAPIModelName(), "ports"},
		{v1alpha2.ServiceSpec{}.OpenAPIModelName(), "ports"},
	} {
		def, ok := defs[c.definition]
		if !ok {
			t.Fatalf("no OpenAPI definition %s", c.definition)
		}
		got := maxItems(def, c.property)
		if got == nil || *got != validation.MaxPorts {
			t.Errorf("%s.%s: OpenAPI maxItems %v, validation allows %d", c.definition, c.property, got, validation.MaxPorts)
		}
	}
}

func maxItems(def common.OpenAPIDefinition, property string) *int64 {
	p, ok := def.Schema.Properties[property]
	if !ok {
		return nil
	}
	return p.MaxItems
}
