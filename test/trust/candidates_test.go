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

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Values a writer might give a field: for each kind a few, and among them the ones
// that open holes where a field is an enumeration, a user id or a switch (root, every
// capability, unconfined profiles, exposed Services, reload mode, an inline nginx.conf).
var (
	stringCandidates = []string{"x", "0", "Unconfined", "Unmasked", "ALL", "SYS_ADMIN", "NodePort", "LoadBalancer",
		"Reload", "Exists", "Localhost", "default", "events {}\nhttp { server { listen 8080; } }\n", "/usr/share/nginx/html", "unconfined"}
	intCandidates  = []int64{0, 1, 80}
	mapCandidates  = []map[string]string{{"app": "payments"}, {"container.apparmor.security.beta.kubernetes.io/nginx": "unconfined"}}
	listCandidates = [][]string{{"x"}, {"ALL"}, {"SYS_ADMIN"}, {"NET_BIND_SERVICE"}, {"10.0.0.0/8"}}
)

// candidates returns the values to try for a leaf of type t.
func candidates(t reflect.Type) []reflect.Value {
	var out []reflect.Value
	switch {
	case t == reflect.TypeFor[resource.Quantity]():
		for _, q := range []string{"1", "64Mi"} {
			out = append(out, reflect.ValueOf(resource.MustParse(q)))
		}
	case t == reflect.TypeFor[intstr.IntOrString]():
		out = append(out, reflect.ValueOf(intstr.FromInt32(1)), reflect.ValueOf(intstr.FromString("50%")), reflect.ValueOf(intstr.FromString("http")))
	case t.Kind() == reflect.Bool:
		out = append(out, reflect.ValueOf(true).Convert(t), reflect.ValueOf(false).Convert(t))
	case t.Kind() == reflect.String:
		for _, s := range stringCandidates {
			out = append(out, reflect.ValueOf(s).Convert(t))
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		for _, n := range intCandidates {
			out = append(out, reflect.ValueOf(n).Convert(t))
		}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		for _, m := range mapCandidates {
			v := reflect.MakeMap(t)
			for k, val := range m {
				var mv reflect.Value
				switch {
				case t.Elem().Kind() == reflect.String:
					mv = reflect.ValueOf(val).Convert(t.Elem())
				case t.Elem() == reflect.TypeFor[resource.Quantity]():
					mv, k = reflect.ValueOf(resource.MustParse("1")), "cpu"
				default:
					mv = reflect.Zero(t.Elem())
				}
				v.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), mv)
			}
			out = append(out, v)
		}
	case t.Kind() == reflect.Slice:
		for _, list := range listCandidates {
			v := reflect.MakeSlice(t, 0, len(list))
			for _, item := range candidatesFromStrings(t.Elem(), list) {
				v = reflect.Append(v, item)
			}
			if v.Len() > 0 {
				out = append(out, v)
			}
		}
	}
	return out
}

// candidatesFromStrings turns strings into items of a list type: strings as they are, numbers as 0.
func candidatesFromStrings(t reflect.Type, list []string) []reflect.Value {
	var out []reflect.Value
	for _, s := range list {
		switch {
		case t.Kind() == reflect.String:
			out = append(out, reflect.ValueOf(s).Convert(t))
		case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
			out = append(out, reflect.Zero(t))
		}
	}
	return out
}
