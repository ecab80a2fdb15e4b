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

// Package tools pins golangci-lint, which make verify runs over every module of this
// repository with the configuration in /.golangci.yml (hack/verify-lint.sh). A module of its
// own, so that the linters' dependencies reach neither the product's modules nor the other
// tools' graphs; hack/verify-lint.sh builds it once per version into $TOOLS_BIN_DIR.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
