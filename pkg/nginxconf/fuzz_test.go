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

package nginxconf

import (
	"errors"
	"strings"
	"testing"
)

// FuzzCheck runs Check on arbitrary bytes, seeded with testdata/valid, the samples'
// inline configurations and broken variants of them. Nothing may panic; an error is a
// *SyntaxError whose line exists and whose message is short; and a configuration
// Check accepts stays accepted inside a block, with the same verdict as nginx's
// tokenizer would give it there.
func FuzzCheck(f *testing.F) {
	for _, conf := range validConfigs(f) {
		f.Add(conf)
		f.Add(strings.Replace(conf, "}", "", 1))
		f.Add(strings.Replace(conf, ";", "", 1))
		f.Add(strings.Replace(conf, "{", "\"{", 1))
		f.Add(conf + "}")
	}
	for _, seed := range []string{"", "}", "{", ";", "\"", "'", "\\", "#", "${", "a\"b\"c;", "x_by_lua_block {", "x_by_lua_block { [==[ ", "x_by_lua_block { --[[ }"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, conf string) {
		err := Check(conf)
		if err == nil {
			if wrapped := "block {\n" + conf + "\n}\n"; Check(wrapped) != nil {
				t.Errorf("accepted alone, refused inside a block: %v", Check(wrapped))
			}
			return
		}
		var syntaxErr *SyntaxError
		if !errors.As(err, &syntaxErr) {
			t.Fatalf("error %v is a %T, not a *SyntaxError", err, err)
		}
		if lines := strings.Count(conf, "\n") + 1; syntaxErr.Line < 1 || syntaxErr.Line > lines {
			t.Errorf("%v: line %d of a configuration of %d lines", err, syntaxErr.Line, lines)
		}
		if len(err.Error()) > 200 {
			t.Errorf("a message of %d bytes: %s", len(err.Error()), err)
		}
	})
}
