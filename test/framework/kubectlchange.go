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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// The changes the tests make to one object, answered as kubectl answers them: kubectl
// reads the object first (so a missing one is named as a read names it), then sends one
// request, and says what became of the object.

// patchTypes are the --type values kubectl takes.
var patchTypes = map[string]types.PatchType{
	"json": types.JSONPatchType, "merge": types.MergePatchType, "strategic": types.StrategicMergePatchType,
}

// readFirst reads the object kubectl's resource builder reads before it changes it, or
// leaves the request to kubectl when the type's mapping went stale.
func readFirst(ctx context.Context, c *getClients, namespace string, o named, subresources ...string) (*unstructured.Unstructured, error) {
	obj, err := c.resourceFor(o.mapping, namespace).Get(ctx, o.name, metav1.GetOptions{}, subresources...)
	if staleMapping(err) {
		c.forget(o.typ)
		return nil, errKubectlMustAnswer
	}
	return obj, err
}

// patchObject is `kubectl patch`: "patched", or "patched (no change)" when the object the
// server returns is the one read before.
func patchObject(ctx context.Context, c *getClients, namespace string, o named, r writeRequest) (stdout, stderr string, err error) {
	patchType, ok := types.StrategicMergePatchType, true
	if r.patchType != "" {
		patchType, ok = patchTypes[strings.ToLower(r.patchType)]
	}
	body, err := yaml.YAMLToJSON([]byte(r.patch))
	if !ok || err != nil || (r.subresource != "" && r.subresource != "status") {
		return "", "", errKubectlMustAnswer
	}
	var subresources []string
	if r.subresource != "" {
		subresources = []string{r.subresource}
	}
	before, err := readFirst(ctx, c, namespace, o, subresources...)
	if err != nil {
		return "", errorLine(err), err
	}
	patched, err := c.resourceFor(o.mapping, namespace).Patch(ctx, o.name, patchType, body,
		metav1.PatchOptions{FieldManager: "kubectl-patch"}, subresources...)
	if apierrors.IsUnsupportedMediaType(err) {
		err = fmt.Errorf("%s is not supported by %s: %w", patchType, o.mapping.GroupVersionKind, err)
	}
	if err != nil {
		return "", errorLine(err), err
	}
	operation := "patched"
	if reflect.DeepEqual(before.Object, patched.Object) {
		operation = "patched (no change)"
	}
	return kindName(o.mapping, patched.GetName()) + " " + operation + "\n", "", nil
}

// scaleObject is `kubectl scale --replicas`: a merge patch of the scale subresource.
func scaleObject(ctx context.Context, c *getClients, namespace string, o named, r writeRequest) (stdout, stderr string, err error) {
	if _, err := readFirst(ctx, c, namespace, o); err != nil {
		if errors.Is(err, errKubectlMustAnswer) {
			return "", "", err
		}
		// kubectl wraps it, and prints it as its own error rather than the server's.
		err = fmt.Errorf("no objects passed to scale %v", err)
		return "", errorLine(err), err
	}
	body := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, r.replicas)
	if _, err := c.resourceFor(o.mapping, namespace).Patch(ctx, o.name, types.MergePatchType, body, metav1.PatchOptions{}, "scale"); err != nil {
		return "", errorLine(err), err
	}
	return kindName(o.mapping, o.name) + " scaled\n", "", nil
}

// labelObject is `kubectl label`: the labels set and removed on the object read, sent as a
// merge patch (an empty one when nothing changes, as kubectl sends it), and kubectl's word
// for what changed. A label to remove that the object lacks, or one to set that it has with
// another value without --overwrite, is left to kubectl, which says so in its own words.
func labelObject(ctx context.Context, c *getClients, namespace string, o named, r writeRequest) (stdout, stderr string, err error) {
	set, remove := map[string]string{}, []string{}
	for _, l := range r.labels {
		key, value, found := strings.Cut(l, "=")
		switch {
		case found && !strings.Contains(value, "=") && len(validation.IsValidLabelValue(value)) == 0:
			set[key] = value
		case !found:
			remove = append(remove, strings.TrimSuffix(l, "-"))
		default:
			return "", "", errKubectlMustAnswer
		}
	}
	obj, err := readFirst(ctx, c, namespace, o)
	if err != nil {
		return "", errorLine(err), err
	}
	labels := obj.GetLabels()
	for _, key := range remove {
		if _, ok := labels[key]; !ok {
			return "", "", errKubectlMustAnswer
		}
	}
	for key, value := range set {
		if current, ok := labels[key]; ok && current != value && !r.overwrite {
			return "", "", errKubectlMustAnswer
		}
	}
	oldData, err := json.Marshal(obj)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	if labels == nil {
		labels = map[string]string{}
	}
	changes := map[string]any{}
	for key, value := range set {
		if current, ok := labels[key]; !ok || current != value {
			changes[key] = value
		}
		labels[key] = value
	}
	for _, key := range remove {
		changes[key] = nil
		delete(labels, key)
	}
	obj.SetLabels(labels)
	newData, err := json.Marshal(obj)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	patch := map[string]any{}
	if len(changes) > 0 {
		patch["metadata"] = map[string]any{"labels": changes}
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return "", "", errKubectlMustAnswer
	}
	if _, err := c.resourceFor(o.mapping, namespace).Patch(ctx, o.name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
		return "", errorLine(err), err
	}
	// kubectl's message compares the object's JSON before and after, lengths included.
	message := "not labeled"
	if !reflect.DeepEqual(oldData, newData) {
		message = "labeled"
		if !r.overwrite && len(newData) < len(oldData) {
			message = "unlabeled"
		}
	}
	return kindName(o.mapping, o.name) + " " + message + "\n", "", nil
}
