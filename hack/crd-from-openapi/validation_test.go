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
	"context"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	crdregistry "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestKubeAPIServerAcceptsCRD runs the generated CRD through what kube-apiserver does on
// create: the CRD strategy's preparation, validation (which includes the structural schema
// and the defaults) and warnings.
func TestKubeAPIServerAcceptsCRD(t *testing.T) {
	crd, scheme := internalCRD(t)
	strategy := crdregistry.NewStrategy(scheme)
	ctx := context.Background()
	strategy.PrepareForCreate(ctx, crd)
	for _, err := range strategy.Validate(ctx, crd) {
		t.Errorf("validation: %v", err)
	}
	for _, warning := range strategy.WarningsOnCreate(ctx, crd) {
		t.Errorf("warning: %s", warning)
	}
}

func TestSchemaIsStructural(t *testing.T) {
	s := structural(t)
	for _, err := range structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s) {
		t.Errorf("structural schema: %v", err)
	}
}
