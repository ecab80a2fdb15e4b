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

// Package nginxoperator holds the storage of the nginxoperators resource and its
// status and scale subresources.
package nginxoperator

import (
	"context"
	"encoding/json"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/validation"
)

// servedVersions lists the wire versions whose reset fields must be declared for
// server-side apply.
var servedVersions = []string{"operator.example.com/v1alpha1", "operator.example.com/v1alpha2"}

// nginxOperatorStrategy governs writes to the main resource: status is ignored there
// and the generation moves only when the spec changes.
type nginxOperatorStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	// gates decide which fields a write may set (gatedfields.go); nil sets none off.
	gates featuregate.FeatureGate
}

// NewStrategy returns the strategy of the main resource; gates are nginx-operator's
// feature gates at the server's emulated release.
func NewStrategy(typer runtime.ObjectTyper, gates featuregate.FeatureGate) nginxOperatorStrategy {
	return nginxOperatorStrategy{typer, names.SimpleNameGenerator, gates}
}

func (nginxOperatorStrategy) NamespaceScoped() bool { return true }

// GetResetFields tells server-side apply that the main resource never writes status,
// which is all PrepareForCreate and PrepareForUpdate discard (metadata.generation is
// the server's and never owned by a manager).
func (nginxOperatorStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return resetFields("status")
}

func (s nginxOperatorStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	o := obj.(*operator.NginxOperator)
	o.Status = operator.NginxOperatorStatus{}
	o.Generation = 1
	dropDisabledFields(ctx, s.gates, &o.Spec, nil)
}

func (s nginxOperatorStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	newObj, oldObj := obj.(*operator.NginxOperator), old.(*operator.NginxOperator)
	newObj.Status = oldObj.Status
	dropDisabledFields(ctx, s.gates, &newObj.Spec, &oldObj.Spec)
	if !apiequality.Semantic.DeepEqual(newObj.Spec, oldObj.Spec) {
		newObj.Generation = oldObj.Generation + 1
	}
}

func (nginxOperatorStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	o := obj.(*operator.NginxOperator)
	return append(append(validation.ValidateNginxOperator(o), validateSize(o, nil)...), validateConfigSyntax(o, nil)...)
}

// WarningsOnCreate warns of a PodDisruptionBudget that allows no disruption at the
// replica count asked for (validation.WarningsForNginxOperator).
func (nginxOperatorStrategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	return validation.WarningsForNginxOperator(obj.(*operator.NginxOperator))
}

func (nginxOperatorStrategy) AllowCreateOnUpdate(ctx context.Context) bool { return false }

// AllowUnconditionalUpdate lets "kubectl replace" without a resourceVersion work, as for
// built-in workloads; a stale resourceVersion still conflicts.
func (nginxOperatorStrategy) AllowUnconditionalUpdate(ctx context.Context) bool { return true }

func (nginxOperatorStrategy) Canonicalize(obj runtime.Object) {}

func (nginxOperatorStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	o, oldObj := obj.(*operator.NginxOperator), old.(*operator.NginxOperator)
	return append(append(validation.ValidateNginxOperatorUpdate(o, oldObj), validateSize(o, oldObj)...), validateConfigSyntax(o, oldObj)...)
}

// WarningsOnUpdate warns as WarningsOnCreate does, /scale included: scaling down to
// the PodDisruptionBudget's minAvailable is worth a word to whoever did it.
func (nginxOperatorStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return validation.WarningsForNginxOperator(obj.(*operator.NginxOperator))
}

// MaxObjectBytes caps the metadata and spec of an NginxOperator, measured as JSON. It
// is what bounds the strings no list bound does (env values, annotations,
// spec.config.inline up to its own 128 KiB), and keeps every object far below etcd's
// 1.5 MiB request limit: the status the controller writes adds about 2 KiB (at most
// 8 conditions of at most 33 KiB each in theory), and the 512 MiB etcd quota holds
// about 2000 objects at the cap against 170,000 typical ones (docs/api.md, "Limits").
const MaxObjectBytes = 256 * 1024

// validateSize refuses a main-resource write whose metadata and spec encode to more
// than MaxObjectBytes of JSON, naming the larger of the two. The status is the
// controller's and not counted, so a status write never makes the next spec write
// fail. An update of an object stored over the cap before it existed may keep its
// size, not grow it.
func validateSize(obj, old *operator.NginxOperator) field.ErrorList {
	metaBytes, specBytes, err := encodedSize(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	size := metaBytes + specBytes
	if size <= MaxObjectBytes {
		return nil
	}
	if old != nil {
		if oldMeta, oldSpec, err := encodedSize(old); err == nil && size <= oldMeta+oldSpec {
			return nil
		}
	}
	path := field.NewPath("spec")
	if metaBytes > specBytes {
		path = field.NewPath("metadata")
	}
	tooLong := field.TooLong(path, "", MaxObjectBytes)
	tooLong.Detail = fmt.Sprintf("the object's metadata and spec are %d bytes as JSON (metadata %d, spec %d), over the limit of %d bytes "+
		"for one NginxOperator: keep a large nginx.conf in a ConfigMap (spec.config.configMapKeyRef), large values of env in ConfigMaps or Secrets (valueFrom)",
		size, metaBytes, specBytes, MaxObjectBytes)
	return field.ErrorList{tooLong}
}

// encodedSize is the length of the JSON of the object's metadata and of its spec.
func encodedSize(obj *operator.NginxOperator) (metaBytes, specBytes int, err error) {
	meta, err := json.Marshal(&obj.ObjectMeta)
	if err != nil {
		return 0, 0, err
	}
	spec, err := json.Marshal(&obj.Spec)
	if err != nil {
		return 0, 0, err
	}
	return len(meta), len(spec), nil
}

// statusStrategy governs the status subresource: only status changes there.
type statusStrategy struct {
	nginxOperatorStrategy
}

// NewStatusStrategy returns the strategy of the status subresource.
func NewStatusStrategy(strategy nginxOperatorStrategy) statusStrategy {
	return statusStrategy{strategy}
}

// GetResetFields tells server-side apply that the status subresource never writes
// metadata or spec, so an apply there owns only what it could change: status.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return resetFields("metadata", "spec")
}

// PrepareForUpdate keeps the stored metadata and spec, as the status subresources of
// custom resources do. Only managedFields are taken from the request: the field
// manager has just recorded the status change in them.
//
// The exception is v1alpha1's preserved-fields annotation when conversion could not
// read it: it stands for v1alpha2-only status fields, so it stays for validation to
// refuse rather than being dropped with the rest of the request's metadata, which
// would reset those fields without a word.
func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	newObj, oldObj := obj.(*operator.NginxOperator), old.(*operator.NginxOperator)
	managedFields := newObj.ManagedFields
	unreadable, held := newObj.Annotations[operator.PreservedFieldsAnnotation]
	newObj.ObjectMeta = *oldObj.ObjectMeta.DeepCopy()
	newObj.ManagedFields = managedFields
	newObj.Spec = oldObj.Spec
	if held {
		if newObj.Annotations == nil {
			newObj.Annotations = map[string]string{}
		}
		newObj.Annotations[operator.PreservedFieldsAnnotation] = unreadable
	}
}

func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateNginxOperatorStatusUpdate(obj.(*operator.NginxOperator), old.(*operator.NginxOperator))
}

func (statusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// resetFields declares the same top-level fields as reset in every served version:
// metadata, spec and status have the same place in all of them.
func resetFields(topLevelFields ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	fields := make(map[fieldpath.APIVersion]*fieldpath.Set, len(servedVersions))
	for _, v := range servedVersions {
		set := fieldpath.NewSet()
		for _, f := range topLevelFields {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		fields[fieldpath.APIVersion(v)] = set
	}
	return fields
}

// GetAttrs returns the labels and the selectable fields of an NginxOperator: its name and
// namespace and operator.SelectableFields.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	o, ok := obj.(*operator.NginxOperator)
	if !ok {
		return nil, nil, fmt.Errorf("given object is not an NginxOperator: %T", obj)
	}
	return labels.Set(o.Labels), generic.AddObjectMetaFieldsSet(fields.Set(operator.SelectableFieldValues(o)), &o.ObjectMeta, true), nil
}

// Match is the filter used for lists and watches with label and field selectors.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
