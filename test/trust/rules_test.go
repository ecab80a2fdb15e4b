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
	"os"
	"regexp"
	"strings"
	"testing"
)

// rule is one row of docs/security.md's table of spec fields.
type rule struct {
	paths []string // the fields, each covering what lies below it
	// needs are the permissions the row names ("create pods", "get secrets"); none for
	// a field that needs nothing beyond NginxOperator rights.
	needs []string
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// A permission as the requester plugin words it: a verb, a resource and maybe a name.
	permission = regexp.MustCompile(`^(get|create) [a-z./]+$`)
)

// securityDoc is the document whose table the test holds the code to.
const securityDoc = "../../docs/security.md"

// readRules parses the rows between the table's markers.
func readRules(t *testing.T) []rule {
	t.Helper()
	data, err := os.ReadFile(securityDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start, end := strings.Index(text, "<!-- spec-field-rules -->"), strings.Index(text, "<!-- /spec-field-rules -->")
	if start < 0 || end < start {
		t.Fatalf("%s has no table between <!-- spec-field-rules --> and <!-- /spec-field-rules -->", securityDoc)
	}
	var rules []rule
	for _, line := range strings.Split(text[start:end], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.Contains(cells[1], "`spec.") {
			continue
		}
		var r rule
		for _, m := range codeSpan.FindAllStringSubmatch(cells[1], -1) {
			if strings.HasPrefix(m[1], "spec.") {
				r.paths = append(r.paths, m[1])
			}
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[len(cells)-2], -1) {
			if permission.MatchString(m[1]) {
				r.needs = append(r.needs, m[1])
			}
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		t.Fatalf("%s: no rows found in the spec field table", securityDoc)
	}
	return rules
}

// covering returns the rows whose fields cover path: the same field or one above it.
func covering(rules []rule, path string) []rule {
	var out []rule
	for _, r := range rules {
		for _, p := range r.paths {
			if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
				out = append(out, r)
				break
			}
		}
	}
	return out
}
