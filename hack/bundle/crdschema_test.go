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
	"os"
	"testing"

	"github.com/operator-framework/api/crds"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// TestCSVMatchesOLMsCRD checks the committed CSV as the kube-apiserver would on create,
// against OLM's own ClusterServiceVersion CRD (from operator-framework/api): it must pass
// the schema and keep every field, since the apiserver silently drops unknown ones.
func TestCSVMatchesOLMsCRD(t *testing.T) {
	data, err := os.ReadFile(committedBundle + "/manifests/" + packageName + ".clusterserviceversion.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var csv map[string]any
	if err := yaml.Unmarshal(data, &csv); err != nil {
		t.Fatal(err)
	}

	crd := crds.ClusterServiceVersion()
	var schema *apiextensionsv1.CustomResourceValidation
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1alpha1" {
			schema = v.Schema
		}
	}
	if schema == nil {
		t.Fatal("OLM's CSV CRD has no v1alpha1 schema")
	}
	var internal apiextensions.CustomResourceValidation
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	validator, _, err := validation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range validation.ValidateCustomResource(field.NewPath(""), csv, validator) {
		t.Errorf("schema: %v", e)
	}
	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pruning.PruneWithOptions(csv, structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		t.Errorf("the apiserver would drop unknown field %s", path)
	}
}
