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
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Names of the CRD. The group differs from ours so both can be served by one
// kube-apiserver; the short name differs from our "ngx" so kubectl is never ambiguous.
const (
	group     = "crd.operator.example.com"
	kind      = "NginxOperator"
	listKind  = "NginxOperatorList"
	plural    = "nginxoperators"
	singular  = "nginxoperator"
	shortName = "ngxcrd"
)

// buildCRD assembles the CustomResourceDefinition from the v1alpha2 OpenAPI definitions
// and Go defaulting.
func buildCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	schema, err := newInliner(definitions()).model(v1alpha2.NginxOperator{}.OpenAPIModelName())
	if err != nil {
		return nil, fmt.Errorf("converting the OpenAPI schema: %w", err)
	}
	if err := deriveDefaults(&schema); err != nil {
		return nil, fmt.Errorf("deriving defaults: %w", err)
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind:       kind,
				ListKind:   listKind,
				Plural:     plural,
				Singular:   singular,
				ShortNames: []string{shortName},
				// As ours: "kubectl get nginx-operator" lists NginxOperators.
				Categories: []string{"nginx-operator"},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name:    v1alpha2.SchemeGroupVersion.Version,
				Served:  true,
				Storage: true,
				Schema:  &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{
						SpecReplicasPath:   ".spec.replicas",
						StatusReplicasPath: ".status.replicas",
						LabelSelectorPath:  ptr.To(".status.selector"),
					},
				},
				AdditionalPrinterColumns: printerColumns,
			}},
		},
	}, nil
}
