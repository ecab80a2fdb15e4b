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
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	validationerrors "github.com/operator-framework/api/pkg/validation/errors"
)

// committedBundle is the bundle make bundle writes, from this package's directory.
const committedBundle = "../../bundle"

// bundleValidators are the validators 'operator-sdk bundle validate' runs by default (the
// registry+v1 format: CSV, CRDs, bundle) and with --select-optional suite=operatorframework
// (OperatorHub metadata, standard capabilities and categories, good practices, APIs
// removed by minKubeVersion), plus the checks of the extra objects (the PDB). Not the
// multi-architecture validator: it inspects the images in a registry.
var bundleValidators = validation.DefaultBundleValidators.WithValidators(
	validation.ObjectValidator,
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.GoodPracticesValidator,
	validation.AlphaDeprecatedAPIsValidator,
)

// findings runs every validator over the bundle and returns its errors and warnings.
func findings(bundle *manifests.Bundle) []validationerrors.Error {
	var found []validationerrors.Error
	for _, result := range bundleValidators.Validate(bundle.ObjectsToValidate()...) {
		found = append(found, result.Errors...)
		found = append(found, result.Warnings...)
	}
	return found
}

// loadBundle loads the bundle as registries do: the CSV with the objects beside it, the
// package and channels from metadata/annotations.yaml.
func loadBundle(t *testing.T) *manifests.Bundle {
	t.Helper()
	bundle, err := manifests.GetBundleFromDir(committedBundle)
	if err != nil {
		t.Fatalf("loading the bundle: %v", err)
	}
	return bundle
}

// TestBundleValid fails on any error or warning of operator-framework's validators.
func TestBundleValid(t *testing.T) {
	bundle := loadBundle(t)
	if bundle.CSV == nil || bundle.Package != packageName || bundle.DefaultChannel != channel {
		t.Fatalf("loaded bundle: CSV %v, package %q, default channel %q; want a CSV, %q, %q", bundle.CSV != nil, bundle.Package, bundle.DefaultChannel, packageName, channel)
	}
	for _, f := range findings(bundle) {
		t.Errorf("%s", f)
	}
	// Both versions are owned API services, served by the apiserver Deployment.
	var versions []string
	for _, api := range bundle.CSV.Spec.APIServiceDefinitions.Owned {
		versions = append(versions, api.Version)
	}
	if got := strings.Join(versions, ","); got != "v1alpha2,v1alpha1" {
		t.Errorf("owned API service versions = %s, want v1alpha2,v1alpha1", got)
	}
}

// TestBundleValidatorsCatchBrokenBundles shows the validation above can fail: each
// breakage of the loaded bundle must produce a finding at the expected level.
func TestBundleValidatorsCatchBrokenBundles(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(csv *operatorsv1alpha1.ClusterServiceVersion)
		level  validationerrors.Level
		want   string
	}{
		{"no icon", func(csv *operatorsv1alpha1.ClusterServiceVersion) { csv.Spec.Icon = nil }, validationerrors.LevelWarn, "Icon not specified"},
		{"no install mode supported", func(csv *operatorsv1alpha1.ClusterServiceVersion) {
			for i := range csv.Spec.InstallModes {
				csv.Spec.InstallModes[i].Supported = false
			}
		}, validationerrors.LevelError, "none of InstallModeTypes are supported"},
		{"no examples", func(csv *operatorsv1alpha1.ClusterServiceVersion) { delete(csv.Annotations, "alm-examples") }, validationerrors.LevelWarn, "example annotations not found"},
		{"unknown category", func(csv *operatorsv1alpha1.ClusterServiceVersion) { csv.Annotations["categories"] = "Web Servers" }, validationerrors.LevelError, "not in the set of standard categories"},
		{"no resource requests", func(csv *operatorsv1alpha1.ClusterServiceVersion) {
			csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Resources.Requests = nil
		}, validationerrors.LevelWarn, "unable to find the resource requests"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bundle := loadBundle(t)
			tc.break_(bundle.CSV)
			for _, f := range findings(bundle) {
				if f.Level == tc.level && strings.Contains(f.Error(), tc.want) {
					return
				}
			}
			t.Errorf("no %s containing %q; findings: %v", tc.level, tc.want, findings(bundle))
		})
	}
}
