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
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
)

// internalCRD returns the generated CRD as kube-apiserver holds it after decoding: defaulted
// by the apiextensions.k8s.io/v1 defaulters and converted to the internal version.
func internalCRD(t *testing.T) (*apiextensions.CustomResourceDefinition, *runtime.Scheme) {
	t.Helper()
	crd, err := buildCRD()
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	apiextensionsinstall.Install(scheme)
	scheme.Default(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := scheme.Convert(crd, internal, nil); err != nil {
		t.Fatal(err)
	}
	return internal, scheme
}

// structural returns the structural schema kube-apiserver builds from the generated CRD.
func structural(t *testing.T) *structuralschema.Structural {
	t.Helper()
	crd, _ := internalCRD(t)
	// A schema shared by every version moves to spec.validation in the internal version.
	validation, err := apiextensions.GetSchemaForVersion(crd, crd.Spec.Versions[0].Name)
	if err != nil || validation == nil {
		t.Fatalf("no schema for %s: %v", crd.Spec.Versions[0].Name, err)
	}
	s, err := structuralschema.NewStructural(validation.OpenAPIV3Schema)
	if err != nil {
		t.Fatalf("not a structural schema: %v", err)
	}
	return s
}
