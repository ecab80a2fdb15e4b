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

package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/nginx-operator/test/framework"
)

// The upgrade-window component emulates the release upgrades start from; cutting a
// release moves both.
func TestUpgradeWindowEmulatesThePreviousRelease(t *testing.T) {
	repo := filepath.Join("..", "..")
	previous, err := framework.PreviousRelease(repo)
	if err != nil {
		t.Fatal(err)
	}
	majorMinor := previous.MajorMinor()
	component, err := os.ReadFile(filepath.Join(repo, "artifacts", "overlays", "components", "upgrade-window", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "--emulated-version=nginx-operator=" + majorMinor + "\n"; !strings.Contains(string(component), want) {
		t.Errorf("components/upgrade-window does not pass %q (hack/previous-release is %s)", strings.TrimSpace(want), previous.Version)
	}
}
