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

package framework

import (
	"bytes"
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastApplied is the annotation in which client-side apply keeps what it applied.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// applyNewObjects is client-side `kubectl apply -f -` when none of the objects exists yet,
// which the tests' first applies are: kubectl then creates each one with the
// configuration it applied in the last-applied annotation, as a later apply (kubectl's, a
// three-way merge left to kubectl itself) expects. When any of them exists, or cannot be
// read, kubectl answers before anything was written.
func applyNewObjects(ctx context.Context, c *getClients, namespace string, enforce bool, stdin string) (stdout, stderr string, err error) {
	objects, err := decodeObjects(c, namespace, enforce, stdin)
	if err != nil {
		return "", "", err
	}
	for _, o := range objects {
		if o.obj.GetName() == "" {
			return "", "", errKubectlMustAnswer
		}
		_, err := c.resourceFor(o.mapping, o.obj.GetNamespace()).Get(ctx, o.obj.GetName(), metav1.GetOptions{})
		if staleMapping(err) {
			c.forget(o.mapping.Resource.Resource) // discovery again next time
			return "", "", errKubectlMustAnswer
		}
		if !apierrors.IsNotFound(err) {
			return "", "", errKubectlMustAnswer
		}
	}
	// Annotated all before the first is created: kubectl may still answer until then.
	for _, o := range objects {
		if err := annotateLastApplied(o.obj); err != nil {
			return "", "", errKubectlMustAnswer
		}
		pruneNulls(o.obj.Object)
	}
	return createEach(ctx, c, objects, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply", FieldValidation: "Strict"}, "created")
}

// annotateLastApplied records obj as applied, as kubectl's CreateApplyAnnotation does: the
// object's JSON with its annotations (an empty map when it has none) but not this one.
func annotateLastApplied(obj *unstructured.Unstructured) error {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, lastApplied)
	obj.SetAnnotations(annotations)
	var applied bytes.Buffer
	if err := unstructured.UnstructuredJSONScheme.Encode(obj, &applied); err != nil {
		return err
	}
	annotations[lastApplied] = applied.String()
	obj.SetAnnotations(annotations)
	return nil
}

// pruneNulls drops the null fields kubectl drops from an object it creates by applying it.
func pruneNulls(value any) {
	switch v := value.(type) {
	case map[string]any:
		for key, field := range v {
			if field == nil {
				delete(v, key)
			} else {
				pruneNulls(field)
			}
		}
	case []any:
		for _, item := range v {
			pruneNulls(item)
		}
	}
}
