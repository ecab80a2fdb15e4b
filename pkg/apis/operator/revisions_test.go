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

package operator

import (
	"fmt"
	"testing"

	"k8s.io/utils/ptr"
)

func TestRevisionContentComparesAsTheAPIDoes(t *testing.T) {
	inline := &ConfigSource{Inline: "events {}\n"}
	files := []ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}}
	for _, tc := range []struct {
		name      string
		old, new  RevisionContent
		changed   string
		sameHash  bool
		emptyOnly bool
	}{
		{"nil and empty lists are the same content", RevisionContent{Files: []ConfigMapFiles{}}, RevisionContent{}, "[]", false, true},
		{"inline text", RevisionContent{Config: inline}, RevisionContent{Config: &ConfigSource{Inline: "events {}\nhttp {}\n"}}, "[spec.config]", false, false},
		{"a ConfigMap instead of inline", RevisionContent{Config: inline}, RevisionContent{Config: &ConfigSource{ConfigMapKeyRef: &ConfigMapKeyReference{Name: "c", Key: "k"}}}, "[spec.config]", false, false},
		{"files and tls added", RevisionContent{Config: inline}, RevisionContent{Config: inline, Files: files, TLS: []TLSSecret{{SecretName: "t"}}}, "[spec.files spec.tls]", false, false},
		{"the same", RevisionContent{Config: inline, Files: files}, RevisionContent{Config: &ConfigSource{Inline: "events {}\n"}, Files: files}, "[]", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(tc.new.ChangedFields(&tc.old)); got != tc.changed {
				t.Errorf("changed = %s, want %s", got, tc.changed)
			}
			equal := tc.changed == "[]"
			if tc.new.Equal(&tc.old) != equal || tc.old.Equal(&tc.new) != equal {
				t.Errorf("Equal = %v, want %v", tc.new.Equal(&tc.old), equal)
			}
			if (tc.new.Hash() == tc.old.Hash()) != tc.sameHash || len(tc.new.Hash()) != 64 {
				t.Errorf("hashes %s and %s: same = %v, want %v", tc.old.Hash(), tc.new.Hash(), tc.new.Hash() == tc.old.Hash(), tc.sameHash)
			}
			if tc.old.IsEmpty() != tc.emptyOnly {
				t.Errorf("IsEmpty = %v", tc.old.IsEmpty())
			}
		})
	}
}

func TestContentIsACopyOfTheSpecsContentFields(t *testing.T) {
	spec := &NginxOperatorSpec{Image: "x", Config: &ConfigSource{Inline: "a"}, TLS: []TLSSecret{{SecretName: "t"}}}
	c := spec.Content()
	c.Config.Inline, c.TLS[0].SecretName = "changed", "changed"
	if spec.Config.Inline != "a" || spec.TLS[0].SecretName != "t" {
		t.Errorf("Content shares memory with the spec: %+v", spec)
	}
	if spec.HistoryLimit() != DefaultRevisionHistoryLimit {
		t.Errorf("default limit %d", spec.HistoryLimit())
	}
	spec.RevisionHistoryLimit = ptr.To[int32](0)
	if spec.HistoryLimit() != 0 || RevisionName("web", 12) != "web-12" {
		t.Errorf("limit %d, name %s", spec.HistoryLimit(), RevisionName("web", 12))
	}
}
