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
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Extensions kube-apiserver understands in a CRD schema and our OpenAPI may carry.
const (
	extListType    = "x-kubernetes-list-type"
	extListMapKeys = "x-kubernetes-list-map-keys"
	extMapType     = "x-kubernetes-map-type"
)

// ignoredExtensions have no CRD equivalent: CRDs do not support strategic merge patch,
// and unions (core/v1's AppArmorProfile, reached through spec.securityContext) are
// documentation there; kube-apiserver validates them in Go, as it does the CRD's copy
// of the same types when the Deployment is created.
var ignoredExtensions = map[string]bool{
	"x-kubernetes-patch-strategy":  true,
	"x-kubernetes-patch-merge-key": true,
	"x-kubernetes-unions":          true,
}

// copyExtensions carries the x-kubernetes-* extensions a CRD schema supports and refuses
// unknown ones, so a new extension in our OpenAPI is looked at rather than silently lost.
func copyExtensions(extensions spec.Extensions, props *apiextensionsv1.JSONSchemaProps) error {
	for key, value := range extensions {
		switch key = strings.ToLower(key); {
		case key == extListType:
			s, ok := value.(string)
			if !ok {
				return fmt.Errorf("%s is %T, want a string", key, value)
			}
			props.XListType = &s
		case key == extListMapKeys:
			keys, err := stringList(value)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			props.XListMapKeys = keys
		case key == extMapType:
			s, ok := value.(string)
			if !ok {
				return fmt.Errorf("%s is %T, want a string", key, value)
			}
			props.XMapType = &s
		case ignoredExtensions[key] || !strings.HasPrefix(key, "x-kubernetes-"):
		default:
			return fmt.Errorf("OpenAPI extension %s has no known CRD equivalent", key)
		}
	}
	return nil
}

func stringList(value interface{}) ([]string, error) {
	switch v := value.(type) {
	case []string:
		return v, nil
	case []interface{}:
		out := make([]string, 0, len(v))
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("entry %v is %T, want a string", item, item)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%T is not a list of strings", value)
}
