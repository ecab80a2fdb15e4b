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

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/apis/operator/validation"
	"github.com/example/nginx-operator/pkg/generated/openapi"
)

// The published schema (kubectl explain, client-side validation, the bench CRD) must
// announce the same list limits that validation enforces.
func TestOpenAPIAnnouncesTheLimits(t *testing.T) {
	defs := openapi.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) })
	maxItems := func(s spec.Schema) *int64 { return s.MaxItems }
	maxProperties := func(s spec.Schema) *int64 { return s.MaxProperties }
	maxLength := func(s spec.Schema) *int64 { return s.MaxLength }
	specDef, podDef, serviceDef := v1alpha2.NginxOperatorSpec{}.OpenAPIModelName(), v1alpha2.PodOptions{}.OpenAPIModelName(), v1alpha2.ServiceSpec{}.OpenAPIModelName()
	for _, c := range []struct {
		definition, property string
		limit                func(spec.Schema) *int64
		want                 int
	}{
		{specDef, "ports", maxItems, validation.MaxPorts},
		{specDef, "env", maxItems, validation.MaxEnv},
		{specDef, "files", maxItems, validation.MaxMounts},
		{specDef, "tls", maxItems, validation.MaxMounts},
		{specDef, "scratch", maxItems, validation.MaxScratch},
		{v1alpha2.ConfigSource{}.OpenAPIModelName(), "inline", maxLength, validation.MaxInlineConfigBytes},
		{serviceDef, "ports", maxItems, validation.MaxPorts},
		{serviceDef, "labels", maxProperties, validation.MaxLabels},
		{serviceDef, "annotations", maxProperties, validation.MaxAnnotations},
		{serviceDef, "loadBalancerSourceRanges", maxItems, validation.MaxLoadBalancerSourceRanges},
		{podDef, "labels", maxProperties, validation.MaxLabels},
		{podDef, "annotations", maxProperties, validation.MaxAnnotations},
		{podDef, "nodeSelector", maxProperties, validation.MaxNodeSelector},
		{podDef, "tolerations", maxItems, validation.MaxTolerations},
		{podDef, "topologySpreadConstraints", maxItems, validation.MaxTopologySpreadConstraints},
		{podDef, "imagePullSecrets", maxItems, validation.MaxImagePullSecrets},
		{v1alpha2.NginxOperatorStatus{}.OpenAPIModelName(), "conditions", maxItems, validation.MaxConditions},
		{v1alpha1.NginxOperatorStatus{}.OpenAPIModelName(), "conditions", maxItems, validation.MaxConditions},
	} {
		def, ok := defs[c.definition]
		if !ok {
			t.Fatalf("no OpenAPI definition %s", c.definition)
		}
		p, ok := def.Schema.Properties[c.property]
		if !ok {
			t.Fatalf("%s has no property %s", c.definition, c.property)
		}
		if got := c.limit(p); got == nil || *got != int64(c.want) {
			t.Errorf("%s.%s: OpenAPI announces %v, validation allows %d", c.definition, c.property, got, c.want)
		}
	}
}
