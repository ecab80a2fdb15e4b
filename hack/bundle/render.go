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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// renderBase renders the kustomize base at dir exactly as `kubectl apply -k dir` would,
// in kustomize's output order, so the bundle is made from the same objects a plain
// install applies.
func renderBase(dir string) ([]*unstructured.Unstructured, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering the kustomize base %s: %w", dir, err)
	}
	var objects []*unstructured.Unstructured
	for _, resource := range resources.Resources() {
		// Through JSON, so numbers are int64 as in objects read from the API.
		data, err := resource.MarshalJSON()
		obj := &unstructured.Unstructured{}
		if err == nil {
			err = obj.UnmarshalJSON(data)
		}
		if err != nil {
			return nil, fmt.Errorf("rendering the kustomize base %s: %s: %w", dir, resource.CurId(), err)
		}
		objects = append(objects, obj)
	}
	return objects, nil
}
