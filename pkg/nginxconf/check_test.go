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
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// validConfigs are the configurations nginx accepts: testdata/valid (real-world files:
// Debian's default, OpenResty's Lua blocks, maps of regexes, split_clients, types,
// stream and mail, the test suites' own) and the inline configurations of
// artifacts/samples.
func validConfigs(t testing.TB) map[string]string {
	t.Helper()
	configs := map[string]string{}
	files, err := filepath.Glob("testdata/valid/*.conf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/valid/*.conf: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		configs[f] = string(data)
	}
	samples, err := filepath.Glob("../../artifacts/samples/*.yaml")
	if err != nil || len(samples) == 0 {
		t.Fatalf("no artifacts/samples: %v", err)
	}
	inline := 0
	for _, f := range samples {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decoder := yaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
		for i := 0; ; i++ {
			var doc struct {
				Spec struct {
					Config struct {
						Inline string `json:"inline"`
					} `json:"config"`
				} `json:"spec"`
			}
			if err := decoder.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if doc.Spec.Config.Inline != "" {
				configs[f+"#"+string(rune('0'+i))] = doc.Spec.Config.Inline
				inline++
			}
		}
	}
	if inline == 0 {
		t.Fatal("no sample in artifacts/samples has spec.config.inline")
	}
	return configs
}

func TestCheckAcceptsWhatNginxAccepts(t *testing.T) {
	for name, conf := range validConfigs(t) {
		if err := Check(conf); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, conf := range []string{
		"",
		"\n\n",
		"events{}http{}",
		"a;b;c{}",
		`include "/etc/nginx/conf.d/*.conf";`,
		"return 200 \"multi\nline\";",
		`set $a "\"";`,
		`set $a '\'';`,
		`set $a \";`,
		`if ($a = "b") {}`,
		`if ($a = 'b'){}`,
		"location ~ \\.(gif|jpg)$ { }",
		"set ${a} ${b}c;",
		"a $;",
		"a \\\n;",
		"a b#c;",
		"a}b;",
		"content_by_lua_block {}",
		"rewrite_by_lua_block { local t = {} }",
		"x_by_lua_block { s = \"}\\\"}\" } y;",
		"x_by_lua_block { --[==[ } ]] ]=] }\n]==] }",
		"x_by_lua_block { a = [[ } ]] -- }\n }",
	} {
		if err := Check(conf); err != nil {
			t.Errorf("%q: %v", conf, err)
		}
	}
}

func TestCheckRefusesSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		name, conf string
		line       int
		message    string
	}{
		{"unclosed block", "events {}\nhttp {\n  server {\n    listen 80;\n  }\n", 2, `the "{" of "http" is never closed (unbalanced braces: 1 "}" missing at the end)`},
		{"two unclosed blocks", "http {\n  server {\n    listen 80;\n", 2, `the "{" of "server" is never closed (unbalanced braces: 2 "}" missing at the end)`},
		{"one } too many", "events {}\nhttp {\n}\n}\n", 4, `unexpected "}": no block is open (unbalanced braces)`},
		{"} at the top", "}", 1, `unexpected "}"`},
		{"missing ; before }", "events {}\nhttp {\n  server {\n    listen 80\n  }\n}\n", 4, `missing ";" after the directive "listen" (found "}" on line 5)`},
		{"missing ; at the end", "events {}\nworker_processes 1", 2, `missing ";" after the directive "worker_processes" (found the end of the file on line 2)`},
		{"missing ; after a quoted string at the end", "events {}\nhttp {}\npid \"/tmp/x\"\n\n", 3, `missing ";" after the directive "pid"`},
		{"missing ; after a comment", "events {}\nuser nginx # the user\n", 2, `missing ";" after the directive "user"`},
		{"a lone word at the end", "events {}\nhttp {}\nx", 3, `missing ";" after the directive "x"`},
		{"a backslash at the end", "events {}\n\\", 2, `missing ";"`},
		{"unterminated double quote", "http {\n  server {\n    return 200 \"abc;\n  }\n}\n", 3, `unterminated quoted string (opened with "\"")`},
		{"unterminated single quote", "events {}\nhttp {\n  log_format main '$remote_addr;\n}\n", 3, `unterminated quoted string (opened with "'")`},
		{"unexpected ;", "events {}\n;\n", 2, `unexpected ";" with no directive before it`},
		{"double ;", "events {}\nhttp {\n  sendfile on;;\n}\n", 3, `unexpected ";"`},
		{"unexpected {", "events {}\n{\n}\n", 2, `unexpected "{" with no directive before it`},
		{"a quoted string glued to a word", "events {}\nhttp {\n  return 200 \"ok\"x;\n}\n", 3, `unexpected "x" after a quoted string`},
		{"a quoted string glued to }", "events {}\nhttp { return 200 \"ok\"}\n", 2, `unexpected "}" after a quoted string`},
		{"an unquoted regex with braces", "http {\n  server {\n    location ~ ^/(a|b){2}$ { return 1; }\n  }\n}\n", 1, `the "{" of "http" is never closed`},
		{"a Lua block that never closes", "http {\n  init_by_lua_block {\n    local t = {{\n  }\n}\n", 2, `the Lua body of "init_by_lua_block" is never closed`},
		{"a long directive name is shortened", strings.Repeat("x", 100) + " {", 1, `the "{" of "` + strings.Repeat("x", 43) + `..." is never closed`},
	} {
		err := Check(tc.conf)
		var syntaxErr *SyntaxError
		if !errors.As(err, &syntaxErr) {
			t.Errorf("%s: Check returned %v, want a *SyntaxError", tc.name, err)
			continue
		}
		if syntaxErr.Line != tc.line || !strings.Contains(syntaxErr.Message, tc.message) {
			t.Errorf("%s: %v, want line %d: ...%s...", tc.name, err, tc.line, tc.message)
		}
		if !strings.HasPrefix(err.Error(), "line ") {
			t.Errorf("%s: %q does not start with its line", tc.name, err)
		}
	}
}

// TestCheckNeverEchoesTheConfig: a message quotes at most a shortened directive name.
func TestCheckNeverEchoesTheConfig(t *testing.T) {
	secret := strings.Repeat("s", 1000)
	for _, conf := range []string{
		"events {}\nhttp { x " + secret + " }",
		"events {}\n" + secret,
		"a \"" + secret,
		"http { " + secret + " {",
	} {
		err := Check(conf)
		if err == nil {
			t.Fatalf("%.40q...: accepted", conf)
		}
		if len(err.Error()) > 200 || strings.Contains(err.Error(), secret) {
			t.Errorf("message of %d bytes: %.120s...", len(err.Error()), err)
		}
	}
}
