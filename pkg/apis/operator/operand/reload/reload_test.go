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

package reload

import (
	"reflect"
	"testing"
)

func TestContentHashTellsFileSetsApart(t *testing.T) {
	a := ContentHash(map[string][]byte{"a": []byte("bc")})
	for name, other := range map[string]map[string][]byte{
		"a name that swallows the content": {"ab": []byte("c")},
		"another content":                  {"a": []byte("bd")},
		"one more file":                    {"a": []byte("bc"), "b": nil},
		"no file":                          {},
	} {
		if ContentHash(other) == a {
			t.Errorf("%s hashes like {a: bc}", name)
		}
	}
	if again := ContentHash(map[string][]byte{"a": []byte("bc")}); again != a {
		t.Errorf("the same files hash to %s and %s", a, again)
	}
}

func TestContentHashesRoundTrip(t *testing.T) {
	in := map[string]string{"tls-0": "ff", "config": "aa", "files-1": "bb"}
	s := FormatContentHashes(in)
	if s != "config=aa files-1=bb tls-0=ff" {
		t.Errorf("formatted %q", s)
	}
	out, err := ParseContentHashes(s)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Errorf("parsed %v, %v", out, err)
	}
	for _, bad := range []string{"config", "=aa", "config=", "a=1 a=2"} {
		if _, err := ParseContentHashes(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if out, err := ParseContentHashes(""); err != nil || len(out) != 0 {
		t.Errorf("empty: %v, %v", out, err)
	}
}
