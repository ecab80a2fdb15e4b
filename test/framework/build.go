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

package framework

import (
	"fmt"
	"os"
	"os/exec"
)

// BuildProduct builds a command of the product (such as ./cmd/apiserver) into out from
// the product module at repoRoot, with its own go.mod as shipped rather than with the
// test module's dependency versions. ldflags may stamp a version, as a release build does.
// The settings are the Makefile's (static, -trimpath), so the packages compiled for one
// build serve the others and go vet.
func BuildProduct(repoRoot, out, pkg string, ldflags ...string) error {
	args := []string{"build", "-trimpath", "-o", out}
	for _, f := range ldflags {
		args = append(args, "-ldflags", f)
	}
	build := exec.Command("go", append(args, pkg)...)
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	return nil
}
