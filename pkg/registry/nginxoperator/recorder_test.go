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

package nginxoperator

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// TestARevisionNobodyCanPointAtIsReplaced: a revision of the next number left by a write
// that cannot commit any more is replaced; one that a write in flight may still commit is
// not, and the second writer is told to try again.
func TestARevisionNobodyCanPointAtIsReplaced(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s := &recordingStorage{now: func() time.Time { return now }}
	no := &operator.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "object", ResourceVersion: "42"}}
	revision := func(owner types.UID, basedOn string, age time.Duration) *operator.NginxOperatorRevision {
		r := &operator.NginxOperatorRevision{ObjectMeta: metav1.ObjectMeta{
			Name: "web-2", UID: "revision", CreationTimestamp: metav1.NewTime(now.Add(-age)),
			Annotations: map[string]string{basedOnAnnotation: basedOn},
		}}
		if owner != "" {
			r.OwnerReferences = []metav1.OwnerReference{{Kind: "NginxOperator", Name: "web", UID: owner, Controller: ptr.To(true)}}
		}
		return r
	}
	for _, tc := range []struct {
		name        string
		existing    *operator.NginxOperatorRevision
		ours        bool
		replaceable bool
	}{
		{"another write in flight from the same version", revision("object", "42", time.Second), false, false},
		{"a write from an older version, which cannot commit", revision("object", "41", time.Second), false, true},
		{"an earlier NginxOperator of the same name", revision("earlier", "42", time.Second), false, true},
		{"no owner", revision("", "42", time.Second), false, true},
		{"abandoned long ago", revision("object", "42", abandonedAfter+time.Second), false, true},
		{"this write's own earlier attempt", revision("object", "42", time.Second), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var attempts []*operator.NginxOperatorRevision
			if tc.ours {
				attempts = append(attempts, tc.existing)
			}
			if got := s.replaceable(tc.existing, no, no.ResourceVersion, attempts); got != tc.replaceable {
				t.Errorf("replaceable = %v, want %v", got, tc.replaceable)
			}
		})
	}
}

func TestOnlyNewDataOfTheSameConfigMapIsAChange(t *testing.T) {
	digests := func(pairs ...string) []operator.ConfigMapDigest {
		var d []operator.ConfigMapDigest
		for i := 0; i < len(pairs); i += 3 {
			d = append(d, operator.ConfigMapDigest{Name: pairs[i], Key: pairs[i+1], Digest: pairs[i+2]})
		}
		return d
	}
	for _, tc := range []struct {
		name        string
		before, now []operator.ConfigMapDigest
		want        string
	}{
		{"unchanged", digests("site", "", "a"), digests("site", "", "a"), "[]"},
		{"new data", digests("site", "", "a", "conf", "nginx.conf", "b"), digests("site", "", "a", "conf", "nginx.conf", "c"), "[ConfigMap conf]"},
		{"first report", nil, digests("site", "", "a"), "[]"},
		{"another ConfigMap (the spec changed)", digests("site", "", "a"), digests("pages", "", "b"), "[]"},
		{"another key of the same ConfigMap", digests("conf", "a.conf", "x"), digests("conf", "b.conf", "y"), "[]"},
		{"gone", digests("site", "", "a"), nil, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(changedConfigMaps(tc.before, tc.now)); got != tc.want {
				t.Errorf("changed = %s, want %s", got, tc.want)
			}
		})
	}
}
