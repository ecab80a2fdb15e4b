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
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// A CRD default is written once per field and applied whenever the field is missing,
// whatever else the object says. Our defaulting is Go code (v1alpha2's SetObjectDefaults,
// registered in the scheme) and may look at other fields: spec.replicas defaults to 1 only
// without spec.qps, spec.service.ports follow spec.ports. So the CRD's defaults are not
// written by hand but observed: every probe (probes.go) is decoded and defaulted through
// the scheme like our apiserver does, and a field the probe left out gets a CRD default
// only when
//   - every probe that left it out ends up with it, with the same value (unconditional), and
//   - defaulting put it there, not decoding (a zero int of a required field, the "{}" a
//     non-pointer struct encodes to).
// An object gets the default {} instead of its whole value, so that kube-apiserver then
// applies the defaults of its fields one by one and leaves the conditional ones out; it gets
// one when it is always there and defaulting created it or something below it has a default
// (spec itself must exist for spec.image's default to apply to an object without spec).
// Values inside a list are compared item by item only when the user sent the list; a list
// the user left out is compared whole.

// observation is what one probe that left a field out got back from Go defaulting.
type observation struct {
	present bool
	value   interface{}
	// byDefaulting is false when decoding alone already gives the value.
	byDefaulting bool
}

// observations are keyed by path: ".spec.ports[].protocol", ".spec.resources.limits{}".
type observations map[string][]observation

// deriveDefaults writes the defaults the probes support into the CRD's root schema.
func deriveDefaults(root *apiextensionsv1.JSONSchemaProps) error {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	obs := observations{}
	for i, probe := range probes {
		in, decoded, defaulted, err := goDefaulting(scheme, decoder, probe)
		if err != nil {
			return fmt.Errorf("probe %d: %w", i, err)
		}
		if err := obs.object(root, "", in, decoded, defaulted); err != nil {
			return fmt.Errorf("probe %d: %w", i, err)
		}
	}
	_, err := obs.apply(root, "")
	return err
}

// goDefaulting returns a probe as sent, as decoded by our scheme and as defaulted by it.
func goDefaulting(scheme *runtime.Scheme, decoder runtime.Decoder, probe string) (in, decoded, defaulted map[string]interface{}, err error) {
	if err := json.Unmarshal([]byte(probe), &in); err != nil {
		return nil, nil, nil, err
	}
	in["apiVersion"], in["kind"] = v1alpha2.SchemeGroupVersion.String(), "NginxOperator"
	sent, err := json.Marshal(in)
	if err != nil {
		return nil, nil, nil, err
	}
	obj := &v1alpha2.NginxOperator{}
	if _, _, err := decoder.Decode(sent, nil, obj); err != nil {
		return nil, nil, nil, err
	}
	if decoded, err = toJSONMap(obj); err != nil {
		return nil, nil, nil, err
	}
	scheme.Default(obj)
	defaulted, err = toJSONMap(obj)
	return in, decoded, defaulted, err
}

func toJSONMap(obj interface{}) (map[string]interface{}, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]interface{}
	return m, json.Unmarshal(data, &m)
}

// object records, for every property the probe left out, what Go gave it, and descends.
func (o observations) object(s *apiextensionsv1.JSONSchemaProps, path string, in, decoded, out map[string]interface{}) error {
	for name := range s.Properties {
		prop := s.Properties[name]
		fieldPath := path + "." + name
		inValue, sent := in[name]
		decodedValue, decodedHas := decoded[name]
		outValue, outHas := out[name]
		if !sent {
			o[fieldPath] = append(o[fieldPath], observation{
				present:      outHas,
				value:        outValue,
				byDefaulting: !decodedHas || !reflect.DeepEqual(decodedValue, outValue),
			})
		}
		if err := o.node(&prop, fieldPath, inValue, sent, decodedValue, outValue); err != nil {
			return err
		}
	}
	return nil
}

func (o observations) node(s *apiextensionsv1.JSONSchemaProps, path string, in interface{}, sent bool, decoded, out interface{}) error {
	switch s.Type {
	case "object":
		outMap, ok := out.(map[string]interface{})
		if !ok {
			return nil
		}
		inMap, _ := in.(map[string]interface{})
		decodedMap, _ := decoded.(map[string]interface{})
		if len(s.Properties) > 0 {
			return o.object(s, path, inMap, decodedMap, outMap)
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
			for key, value := range inMap {
				if err := o.node(ap.Schema, path+"{}", value, true, decodedMap[key], outMap[key]); err != nil {
					return err
				}
			}
		}
	case "array":
		if !sent || s.Items == nil || s.Items.Schema == nil {
			return nil
		}
		inList, _ := in.([]interface{})
		decodedList, _ := decoded.([]interface{})
		outList, _ := out.([]interface{})
		if len(inList) != len(outList) {
			return fmt.Errorf("%s: Go defaulting changes the length of a list that was sent; a CRD cannot express that", path)
		}
		for i := range inList {
			var decodedItem interface{}
			if i < len(decodedList) {
				decodedItem = decodedList[i]
			}
			if err := o.node(s.Items.Schema, path+"[]", inList[i], true, decodedItem, outList[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// apply sets the supported defaults below s, innermost first, and reports whether s has
// any default below it.
func (o observations) apply(s *apiextensionsv1.JSONSchemaProps, path string) (bool, error) {
	found := false
	for name := range s.Properties {
		prop := s.Properties[name]
		fieldPath := path + "." + name
		below, err := o.apply(&prop, fieldPath)
		if err != nil {
			return false, err
		}
		if prop.Default, err = o.decide(&prop, fieldPath, below); err != nil {
			return false, err
		}
		s.Properties[name] = prop
		found = found || below || prop.Default != nil
	}
	if s.Items != nil && s.Items.Schema != nil {
		below, err := o.apply(s.Items.Schema, path+"[]")
		if err != nil {
			return false, err
		}
		found = found || below
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		below, err := o.apply(ap.Schema, path+"{}")
		if err != nil {
			return false, err
		}
		found = found || below
	}
	return found, nil
}

// decide returns the default of the field at path, or nil when it must not have one.
func (o observations) decide(s *apiextensionsv1.JSONSchemaProps, path string, defaultsBelow bool) (*apiextensionsv1.JSON, error) {
	seen := o[path]
	if len(seen) == 0 {
		return nil, nil
	}
	byDefaulting := false
	for _, ob := range seen {
		if !ob.present {
			return nil, nil
		}
		byDefaulting = byDefaulting || ob.byDefaulting
	}
	if s.Type == "object" && len(s.Properties) > 0 {
		if !byDefaulting && !defaultsBelow {
			return nil, nil
		}
		return &apiextensionsv1.JSON{Raw: []byte("{}")}, nil
	}
	for _, ob := range seen[1:] {
		if !reflect.DeepEqual(ob.value, seen[0].value) {
			return nil, nil
		}
	}
	if !byDefaulting {
		return nil, nil
	}
	raw, err := json.Marshal(seen[0].value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}
