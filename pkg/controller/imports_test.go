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

package controller

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The controller is a client of the API: it may see the versioned types and the
// generated clients, never the apiserver's internal types, registry or server.
func TestControllerImportsOnlyTheVersionedAPI(t *testing.T) {
	const module = "github.com/example/nginx-operator/"
	allowed := []string{
		module + "pkg/apis/operator/v1alpha2",
		module + "pkg/generated/",
		module + "pkg/apis/operator/operand",        // no API types: facts both sides share
		module + "pkg/apis/operator/operand/reload", // the sidecar contract: standard library only
		module + "pkg/controller",
		module + "pkg/controller/", // its parts: apply, builders, content
		module + "pkg/cmd/controller",
	}
	for _, dir := range []string{".", "apply", "builders", "content", "../cmd/controller", "../../cmd/controller"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, file := range files {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !strings.HasPrefix(path, module) {
					continue
				}
				ok := false
				for _, a := range allowed {
					if path == a || strings.HasSuffix(a, "/") && strings.HasPrefix(path, a) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s imports %s; the controller may import only %v", file, path, allowed)
				}
			}
		}
	}
}
