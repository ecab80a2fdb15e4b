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

// Package docs holds tests that keep README.md, CONTRIBUTING.md, SECURITY.md,
// artifacts/overlays/README.md and docs/*.md true to the tree: every make target, script and
// flag, path, link, chart value, metric, alert and overlay they name exists, Go commands stay
// inside the module they name, the examples that move images move all of them, and the
// install commands the real-node suite runs are the ones the documents give, and no measured
// figure is restated in prose instead of linked to the file generated with it. They read files
// only (and `go env`): no cluster, no network, no root.
package docs
