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
	"reflect"
	"testing"
)

func TestJSONLeavesNamesEveryField(t *testing.T) {
	got, err := JSONLeaves("spec", map[string]any{"a": 1, "b": map[string]any{"c": "x", "d": []any{true, map[string]any{"e": nil}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"spec.a": "1", "spec.b.c": `"x"`, "spec.b.d[0]": "true", "spec.b.d[1].e": "null"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSONLeaves = %v, want %v", got, want)
	}
}
