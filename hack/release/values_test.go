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
	"strings"
	"testing"
)

func TestSetValues(t *testing.T) {
	values := `# The operator image.
image:
  repository: example.com/nginx-operator
  tag: "" # the chart's appVersion

resources:
  requests: {cpu: 100m, memory: 128Mi}
`
	out, err := setValues([]byte(values), map[string]string{"image.repository": "r/op", "image.tag": "v1@sha256:1"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("repository: example.com/nginx-operator", `repository: "r/op"`, `tag: ""`, `tag: "v1@sha256:1"`).Replace(values)
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	// A flow mapping is not supported, and must fail rather than write broken YAML.
	if out, err := setValues([]byte("image: {repository: a, tag: b}\n"), map[string]string{"image.tag": "x"}); err == nil {
		t.Errorf("setting a value inside a flow mapping gave %q", out)
	}
	if out, err := setValues([]byte("image:\n  tag: 'it''s' # c\n"), map[string]string{"image.tag": "x"}); err != nil || string(out) != "image:\n  tag: \"x\" # c\n" {
		t.Errorf("a single-quoted value: %q, %v", out, err)
	}
	if _, err := setValues([]byte(values), map[string]string{"etcd.image.tag": "x"}); err == nil {
		t.Error("setting a value the chart does not have succeeded")
	}
}
