//go:build tools

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

// Package tools pins what cuts, signs and serves a release (make release,
// hack/release-push.sh): cosign signs offline with a key; distribution's registry is the OCI
// registry the tests push a release to, and crane (already in cosign's graph) pushes the
// release's image layouts there. A module of their own, so that neither their dependencies nor
// their versions reach the product's modules or the ecosystem tools' graph;
// hack/tools/build.sh --release builds them.
package tools

import (
	_ "github.com/distribution/distribution/v3/cmd/registry"
	_ "github.com/google/go-containerregistry/cmd/crane"
	_ "github.com/sigstore/cosign/v2/cmd/cosign"
)
