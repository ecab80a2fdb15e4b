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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// DefaultRevisionHistoryLimit is how many revisions before the newest are kept when
// spec.revisionHistoryLimit is unset, as for a Deployment's ReplicaSets.
const DefaultRevisionHistoryLimit = 10

// MaxRevisionHistoryLimit bounds spec.revisionHistoryLimit.
const MaxRevisionHistoryLimit = 100

// NginxOperatorLabel on an NginxOperatorRevision names its NginxOperator, so that
// "kubectl get nginxoperatorrevisions -l operator.example.com/nginxoperator=web" lists
// one object's history.
const NginxOperatorLabel = "operator.example.com/nginxoperator"

// RevisionName is the name of revision n of the NginxOperator called name.
func RevisionName(name string, n int64) string {
	return name + "-" + strconv.FormatInt(n, 10)
}

// HistoryLimit is spec.revisionHistoryLimit or its default.
func (s *NginxOperatorSpec) HistoryLimit() int32 {
	if s.RevisionHistoryLimit == nil {
		return DefaultRevisionHistoryLimit
	}
	return *s.RevisionHistoryLimit
}

// Content is the part of the spec a revision records: what the pods load from
// spec.config, spec.files and spec.tls.
func (s *NginxOperatorSpec) Content() RevisionContent {
	c := RevisionContent{Config: s.Config, Files: s.Files, TLS: s.TLS}
	return *c.DeepCopy()
}

// IsEmpty is true for a spec that mounts nothing.
func (c *RevisionContent) IsEmpty() bool {
	return c.Config == nil && len(c.Files) == 0 && len(c.TLS) == 0
}

// Equal compares two contents as the API does (nil and empty lists are equal).
func (c *RevisionContent) Equal(other *RevisionContent) bool {
	a, b := *c, *other
	if len(a.Files) == 0 {
		a.Files = nil
	}
	if len(b.Files) == 0 {
		b.Files = nil
	}
	if len(a.TLS) == 0 {
		a.TLS = nil
	}
	if len(b.TLS) == 0 {
		b.TLS = nil
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

// ChangedFields names the content fields that differ between old and c.
func (c *RevisionContent) ChangedFields(old *RevisionContent) []string {
	var changed []string
	if !apiequality.Semantic.DeepEqual(c.Config, old.Config) {
		changed = append(changed, "spec.config")
	}
	if (len(c.Files) != 0 || len(old.Files) != 0) && !apiequality.Semantic.DeepEqual(c.Files, old.Files) {
		changed = append(changed, "spec.files")
	}
	if (len(c.TLS) != 0 || len(old.TLS) != 0) && !apiequality.Semantic.DeepEqual(c.TLS, old.TLS) {
		changed = append(changed, "spec.tls")
	}
	return changed
}

// Hash is the SHA-256 of the content's JSON, to tell revisions apart at a glance.
func (c *RevisionContent) Hash() string {
	return c.HashWith(nil)
}

// HashWith is Hash of the content together with the digests of its ConfigMaps' data, when
// they are known.
func (c *RevisionContent) HashWith(digests []ConfigMapDigest) string {
	var data []byte
	var err error
	if len(digests) == 0 {
		data, err = json.Marshal(c)
	} else {
		data, err = json.Marshal(struct {
			Content *RevisionContent
			Digests []ConfigMapDigest
		}{c, digests})
	}
	if err != nil { // plain structs of strings: cannot fail
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
