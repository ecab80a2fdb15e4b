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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// readExamples reads the sample NginxOperators (one object per file), sorted by file name.
func readExamples(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var examples []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if data, err = yaml.YAMLToJSON(data); err == nil {
			err = obj.UnmarshalJSON(data)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		examples = append(examples, obj)
	}
	return examples, nil
}

// almExamples renders the samples as the CSV's alm-examples annotation, which OLM's
// console offers as templates. The namespace is dropped: the console creates the object
// in the namespace the user is in. Every owned version must have an example.
func almExamples(samples []*unstructured.Unstructured, owned []operatorsv1alpha1.APIServiceDescription) (string, error) {
	var examples []map[string]any
	for _, sample := range samples {
		example := sample.DeepCopy()
		example.SetNamespace("")
		examples = append(examples, example.Object)
	}
	for _, api := range owned {
		apiVersion := api.Group + "/" + api.Version
		if !slices.ContainsFunc(samples, func(s *unstructured.Unstructured) bool {
			return s.GetAPIVersion() == apiVersion && s.GetKind() == api.Kind
		}) {
			return "", fmt.Errorf("no sample of %s %s", apiVersion, api.Kind)
		}
	}
	out, err := json.MarshalIndent(examples, "", "  ")
	return string(out), err
}
