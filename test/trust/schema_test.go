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

package trust

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// step is one move from a value to a part of it: a struct field or the first list item.
type step struct {
	field int // index of the struct field, or -1 for the first item of a list
}

// leaf is a field the writer sets: its JSON path ("spec.tls[].secretName"), the steps that
// reach it from the spec and its type.
type leaf struct {
	path  string
	steps []step
	typ   reflect.Type
}

// atomic types are set as one value, though Go sees structs or maps.
var atomic = map[reflect.Type]bool{
	reflect.TypeFor[resource.Quantity]():  true,
	reflect.TypeFor[intstr.IntOrString](): true,
}

// leaves walks a spec type by reflection, as its JSON (and so its OpenAPI schema) is laid
// out: every field a writer can set, below structs, pointers and list items.
func leaves(spec reflect.Type) []leaf {
	var out []leaf
	var walk func(t reflect.Type, path string, steps []step, depth int)
	walk = func(t reflect.Type, path string, steps []step, depth int) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case depth > 12:
			panic("the spec is deeper than expected at " + path)
		case atomic[t] || t.Kind() != reflect.Struct && !(t.Kind() == reflect.Slice && elem(t).Kind() == reflect.Struct && !atomic[elem(t)]):
			out = append(out, leaf{path: path, steps: append([]step(nil), steps...), typ: t})
		case t.Kind() == reflect.Slice:
			walk(t.Elem(), path+"[]", append(steps, step{field: -1}), depth+1)
		default:
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" || !f.IsExported() {
					continue
				}
				if name == "" { // embedded, inlined
					walk(f.Type, path, append(steps, step{field: i}), depth+1)
					continue
				}
				walk(f.Type, path+"."+name, append(steps, step{field: i}), depth+1)
			}
		}
	}
	walk(spec, "spec", nil, 0)
	return out
}

func elem(t reflect.Type) reflect.Type {
	e := t.Elem()
	for e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	return e
}

// set gives the leaf of spec (a pointer to a spec) the value, allocating what lies on the way.
func set(spec any, l leaf, value reflect.Value) {
	v := reflect.ValueOf(spec).Elem()
	for _, s := range l.steps {
		v = deref(v)
		if s.field >= 0 {
			v = v.Field(s.field)
			continue
		}
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		v = v.Index(0)
	}
	v = deref(v)
	v.Set(value)
}

// deref allocates and follows pointers.
func deref(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v
}
