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

func TestCheckRefs(t *testing.T) {
	op := imageRecord{Name: "nginx-operator", Repository: "r.example/nginx-operator", Tag: "v1", Digest: "sha256:aa"}
	etcd := imageRecord{Name: "etcd", Repository: "r.example/nginx-operator/etcd", Tag: "3.6.8", Digest: "sha256:bb"}
	for name, tc := range map[string]struct {
		refs        []string
		tagsAllowed bool
		want        []string // substrings of the problems, in order; none: no problem
	}{
		"by digest":                 {refs: []string{"r.example/nginx-operator@sha256:aa", "r.example/nginx-operator/etcd@sha256:bb"}},
		"tag and digest in a chart": {refs: []string{"r.example/nginx-operator:v1@sha256:aa", "r.example/nginx-operator/etcd:3.6.8@sha256:bb"}, tagsAllowed: true},
		"a tag only": {
			refs: []string{"r.example/nginx-operator:v1", "r.example/nginx-operator/etcd@sha256:bb"},
			want: []string{"r.example/nginx-operator:v1 is not referenced by digest", "references no nginx-operator image"},
		},
		"a tag in install.yaml": {
			refs: []string{"r.example/nginx-operator:v1@sha256:aa", "r.example/nginx-operator/etcd@sha256:bb"},
			want: []string{"want r.example/nginx-operator@sha256:aa", "references no nginx-operator image"},
		},
		"another tag": {
			refs: []string{"r.example/nginx-operator:v2@sha256:aa", "r.example/nginx-operator/etcd:3.6.8@sha256:bb"}, tagsAllowed: true,
			want: []string{"want r.example/nginx-operator@sha256:aa", "references no nginx-operator image"},
		},
		"an unknown digest": {
			refs: []string{"r.example/nginx-operator@sha256:cc", "r.example/nginx-operator/etcd@sha256:bb"},
			want: []string{"sha256:cc is the digest of no image of the release", "references no nginx-operator image"},
		},
		"the other image's digest": {
			refs: []string{"r.example/nginx-operator@sha256:bb", "r.example/nginx-operator/etcd@sha256:bb"},
			want: []string{"the digest is etcd's", "references no nginx-operator image"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			v := &verifier{digests: map[string]imageRecord{op.Digest: op, etcd.Digest: etcd}}
			v.checkRefs("install.yaml", tc.refs, tc.tagsAllowed, "nginx-operator", "etcd")
			if len(v.problems) != len(tc.want) {
				t.Fatalf("problems %q, want %d", v.problems, len(tc.want))
			}
			for i, want := range tc.want {
				if !strings.Contains(v.problems[i], want) {
					t.Errorf("problem %q does not say %q", v.problems[i], want)
				}
			}
		})
	}
}
