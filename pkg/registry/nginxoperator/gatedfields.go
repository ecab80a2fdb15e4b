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
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/warning"
	"k8s.io/component-base/featuregate"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/features"
)

// gatedField is a spec field added after the first release, behind its feature gate.
type gatedField struct {
	path  string
	gate  featuregate.Feature
	inUse func(*operator.NginxOperatorSpec) bool
	drop  func(*operator.NginxOperatorSpec)
}

var gatedFields = []gatedField{{
	path:  "spec.contentUpdate",
	gate:  features.ContentUpdate,
	inUse: func(s *operator.NginxOperatorSpec) bool { return s.ContentUpdate != "" },
	drop:  func(s *operator.NginxOperatorSpec) { s.ContentUpdate = "" },
}, {
	path:  "spec.revisionHistoryLimit",
	gate:  features.Revisions,
	inUse: func(s *operator.NginxOperatorSpec) bool { return s.RevisionHistoryLimit != nil },
	drop:  func(s *operator.NginxOperatorSpec) { s.RevisionHistoryLimit = nil },
}, {
	path:  "spec.canary",
	gate:  features.StagedReload,
	inUse: func(s *operator.NginxOperatorSpec) bool { return s.Canary != nil },
	drop:  func(s *operator.NginxOperatorSpec) { s.Canary = nil },
}}

// dropDisabledFields clears the fields whose gate is off, as Kubernetes' strategies do
// for fields of disabled features, and says so in a warning: a server emulating an
// earlier release must not store what that release's replicas would drop on their next
// write. A field the stored object (old) already uses is kept, so an update that does
// not touch it never removes it (emulation lowered after the field was set).
func dropDisabledFields(ctx context.Context, gates featuregate.FeatureGate, spec, old *operator.NginxOperatorSpec) {
	if gates == nil {
		return
	}
	for _, f := range gatedFields {
		if gates.Enabled(f.gate) || !f.inUse(spec) || (old != nil && f.inUse(old)) {
			continue
		}
		f.drop(spec)
		warning.AddWarning(ctx, "", fmt.Sprintf("%s was not stored: this apiserver runs with feature gate nginx-operator:%s off "+
			"(it emulates an nginx-operator release before the field existed, as during an upgrade, until every replica runs the new release)", f.path, f.gate))
	}
}
