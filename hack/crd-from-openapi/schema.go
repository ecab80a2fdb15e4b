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
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/example/nginx-operator/pkg/generated/openapi"
)

// refPrefix is how the reference callback spells a model name; resolving strips it again.
const refPrefix = "#/definitions/"

// definitions returns our generated OpenAPI definitions keyed by model name.
func definitions() map[string]common.OpenAPIDefinition {
	return openapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef(refPrefix + name)
	})
}

// inliner turns OpenAPI definitions into one self-contained CRD schema: CRDs forbid $ref,
// so every reference is replaced by a copy of what it names.
type inliner struct {
	defs map[string]common.OpenAPIDefinition
	// resolving holds the models being inlined, to refuse recursive types (a CRD schema
	// cannot express them) instead of recursing forever.
	resolving map[string]bool
}

func newInliner(defs map[string]common.OpenAPIDefinition) *inliner {
	return &inliner{defs: defs, resolving: map[string]bool{}}
}

// model inlines the definition called name.
func (in *inliner) model(name string) (apiextensionsv1.JSONSchemaProps, error) {
	if props, ok := wellKnownType(name); ok {
		return props, nil
	}
	def, ok := in.defs[name]
	if !ok {
		return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("no OpenAPI definition named %s", name)
	}
	if in.resolving[name] {
		return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("%s refers to itself; a CRD schema cannot express recursive types", name)
	}
	in.resolving[name] = true
	defer delete(in.resolving, name)
	props, err := in.schema(def.Schema)
	if err != nil {
		return props, fmt.Errorf("%s: %w", name, err)
	}
	return props, nil
}

// schema converts one OpenAPI schema. Defaults written in the OpenAPI definitions are not
// carried: openapi-gen writes "default: {}" for every non-pointer struct, which is not what
// our Go defaulting does; the CRD's defaults come from defaults.go instead.
func (in *inliner) schema(s spec.Schema) (apiextensionsv1.JSONSchemaProps, error) {
	if ref, ok := reference(s); ok {
		props, err := in.model(ref)
		if err != nil {
			return props, err
		}
		// The field's own description says more about the field than its type's.
		if s.Description != "" {
			props.Description = s.Description
		}
		return props, nil
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || s.Not != nil {
		return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("oneOf/anyOf/allOf/not outside the well-known types are not supported")
	}
	if len(s.Type) != 1 {
		return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("want exactly one type, got %q (a structural schema needs one)", s.Type)
	}
	props := apiextensionsv1.JSONSchemaProps{
		Description:      s.Description,
		Type:             s.Type[0],
		Format:           s.Format,
		Required:         s.Required,
		Nullable:         s.Nullable,
		Maximum:          s.Maximum,
		ExclusiveMaximum: s.ExclusiveMaximum,
		Minimum:          s.Minimum,
		ExclusiveMinimum: s.ExclusiveMinimum,
		MaxLength:        s.MaxLength,
		MinLength:        s.MinLength,
		Pattern:          s.Pattern,
		MaxItems:         s.MaxItems,
		MinItems:         s.MinItems,
		MultipleOf:       s.MultipleOf,
		MaxProperties:    s.MaxProperties,
		MinProperties:    s.MinProperties,
	}
	if s.UniqueItems {
		return props, fmt.Errorf("uniqueItems cannot be expressed in a CRD; use x-kubernetes-list-type: set")
	}
	for _, value := range s.Enum {
		raw, err := json.Marshal(value)
		if err != nil {
			return props, fmt.Errorf("enum value %v: %w", value, err)
		}
		props.Enum = append(props.Enum, apiextensionsv1.JSON{Raw: raw})
	}
	if err := copyExtensions(s.Extensions, &props); err != nil {
		return props, err
	}
	if len(s.Properties) > 0 {
		props.Properties = make(map[string]apiextensionsv1.JSONSchemaProps, len(s.Properties))
		for name, property := range s.Properties {
			converted, err := in.schema(property)
			if err != nil {
				return props, fmt.Errorf(".%s: %w", name, err)
			}
			props.Properties[name] = converted
		}
	}
	if s.Items != nil {
		if s.Items.Schema == nil || len(s.Items.Schemas) > 0 {
			return props, fmt.Errorf("tuple items are not supported by CRDs")
		}
		items, err := in.schema(*s.Items.Schema)
		if err != nil {
			return props, fmt.Errorf("[]: %w", err)
		}
		props.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if ap.Schema == nil {
			props.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: ap.Allows}
		} else {
			values, err := in.schema(*ap.Schema)
			if err != nil {
				return props, fmt.Errorf("{}: %w", err)
			}
			props.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &values}
		}
	}
	requireListMapKeys(&props)
	return props, nil
}

// reference returns the model a schema refers to, either directly or through the
// single-entry allOf that generators use to attach a description to a reference.
func reference(s spec.Schema) (string, bool) {
	if ref := s.Ref.String(); ref != "" {
		return strings.TrimPrefix(ref, refPrefix), true
	}
	if len(s.AllOf) == 1 && s.AllOf[0].Ref.String() != "" && len(s.Type) == 0 {
		return strings.TrimPrefix(s.AllOf[0].Ref.String(), refPrefix), true
	}
	return "", false
}

// requireListMapKeys makes every key of a map-list required: kube-apiserver refuses a CRD
// whose list-map keys may be missing (required or defaulted, and no key gets a default). The
// only key that is optional in our OpenAPI is the name of a container port (k8s.io/api's
// ContainerPort), and our validation refuses a port without a name, so requiring it changes
// nothing a user can create.
func requireListMapKeys(props *apiextensionsv1.JSONSchemaProps) {
	if len(props.XListMapKeys) == 0 || props.Items == nil || props.Items.Schema == nil {
		return
	}
	items := props.Items.Schema
	for _, key := range props.XListMapKeys {
		if !slices.Contains(items.Required, key) {
			items.Required = append(items.Required, key)
		}
	}
}
