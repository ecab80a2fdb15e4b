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

// Package features holds nginx-operator's own feature gates, one per API field added
// after the first release. A gate is versioned: it is on from the release that
// introduced its field, so --emulated-version=nginx-operator=<previous release> turns
// off every field the previous release does not know. That is what keeps a rolling
// upgrade from losing data: an apiserver replica of the previous release decodes a
// stored object without the fields it does not know and writes it back without them
// (a status write is enough), so the new replicas must not accept those fields until
// every replica is new (docs/operations.md, Upgrading).
package features

import (
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const (
	// ContentUpdate gates spec.contentUpdate (v1alpha2), introduced in 0.2.
	ContentUpdate featuregate.Feature = "ContentUpdate"
	// Revisions gates the recording of NginxOperatorRevisions, status.revision, the
	// rollback subresource and spec.revisionHistoryLimit (v1alpha2), introduced in 0.2: a
	// replica of 0.1 would drop status.revision on its next write of an object.
	Revisions featuregate.Feature = "Revisions"
	// StagedReload gates spec.canary (v1alpha2), introduced in 0.2.
	StagedReload featuregate.Feature = "StagedReload"
)

// versionedFeatures is the history of every gate: the release a field came in, and any
// later change of its default.
var versionedFeatures = map[featuregate.Feature]featuregate.VersionedSpecs{
	ContentUpdate: {
		{Version: utilversion.MajorMinor(0, 2), Default: true, PreRelease: featuregate.Beta},
	},
	Revisions: {
		{Version: utilversion.MajorMinor(0, 2), Default: true, PreRelease: featuregate.Beta},
	},
	StagedReload: {
		{Version: utilversion.MajorMinor(0, 2), Default: true, PreRelease: featuregate.Beta},
	},
}

// NewFeatureGate returns nginx-operator's gates for a binary of release binary; the
// server's component registry moves them to its emulation version.
func NewFeatureGate(binary *utilversion.Version) featuregate.MutableVersionedFeatureGate {
	gate := featuregate.NewVersionedFeatureGate(utilversion.MajorMinor(binary.Major(), binary.Minor()))
	utilruntime.Must(gate.AddVersioned(versionedFeatures))
	return gate
}
