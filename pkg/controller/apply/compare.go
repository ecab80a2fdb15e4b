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

package apply

import (
	"encoding/json"
	"reflect"
)

// sameFields reports whether two apply configurations set the same values. Empty
// objects are ignored: managed fields may record ownership of an empty struct (for
// example status, or a defaulted strategy), which asserts no value.
func sameFields(a, b any) (bool, error) {
	pa, err := prunedJSON(a)
	if err != nil {
		return false, err
	}
	pb, err := prunedJSON(b)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(pa, pb), nil
}

func prunedJSON(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return prune(out), nil
}

// prune drops nulls, empty objects and empty lists, bottom up.
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if p := prune(child); p == nil {
				delete(t, k)
			} else {
				t[k] = p
			}
		}
		if len(t) == 0 {
			return nil
		}
		return t
	case []any:
		kept := t[:0]
		for _, child := range t {
			if p := prune(child); p != nil {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			return nil
		}
		return kept
	}
	return v
}
