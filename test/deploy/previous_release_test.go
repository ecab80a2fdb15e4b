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

package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/example/nginx-operator/test/framework"
)

// previousRelease is the release upgrades start from (hack/previous-release): its
// tree, with its chart, and its operator image, built by its own hack/images/build.sh
// and imported into the node's containerd. Made in the background from the start of a run
// that has a test which needs it (prefetch), beside the tests before that one.
var previousRelease = newPreviousBuild()

type previousBuild struct {
	build
	release framework.Release
	tree    string // the release's checkout: charts/nginx-operator
	image   string
}

func newPreviousBuild() *previousBuild {
	p := &previousBuild{}
	p.what, p.run = "the previous release's operator image", p.checkOutAndBuild
	return p
}

// waitPreviousRelease needs the previous release and returns it, its checkout and its
// operator image.
func waitPreviousRelease(t *testing.T) (framework.Release, string, string) {
	t.Helper()
	need(t, previousRelease)
	t.Logf("the previous release %s (%s) is %s", previousRelease.release.Version, previousRelease.release.Commit, previousRelease.image)
	return previousRelease.release, previousRelease.tree, previousRelease.image
}

// checkOutAndBuild keeps the release's checkout in _output/previous-release/ between runs:
// its commit never changes, so its build.sh finds its image current there after the first.
func (p *previousBuild) checkOutAndBuild() error {
	release, err := framework.PreviousRelease(stack.RepoRoot)
	if err != nil {
		return err
	}
	p.release = release
	tree := filepath.Join(stack.RepoRoot, "_output", "previous-release", release.Version+"-"+release.Commit)
	p.tree = tree
	if _, err := os.Stat(filepath.Join(tree, ".checked-out")); err != nil {
		// Checked out beside and renamed: a checkout cut short is not taken for whole.
		if err := os.RemoveAll(tree); err != nil {
			return err
		}
		partial := tree + ".partial"
		if err := os.RemoveAll(partial); err != nil {
			return err
		}
		if err := os.MkdirAll(partial, 0o755); err != nil {
			return err
		}
		if err := release.CheckOut(stack.RepoRoot, partial); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(partial, ".checked-out"), nil, 0o644); err != nil {
			return err
		}
		if err := os.Rename(partial, tree); err != nil {
			return err
		}
	}
	// Its own build script, as its release was built; the tag is its version.
	script := exec.Command(filepath.Join(tree, "hack", "images", "build.sh"), "nginx-operator")
	script.Dir = tree
	script.Env = append(slices.Clone(stack.Env()), "VERSION="+release.Version, "IMAGE_TAG="+release.Version)
	if out, err := script.CombinedOutput(); err != nil {
		return &commandError{"building the operator image of " + release.Version, err, out}
	}
	refs, err := readImagesEnv(filepath.Join(tree, "_output", "images", "images.env"))
	if err != nil {
		return err
	}
	imp := exec.Command(filepath.Join(stack.RepoRoot, "hack", "images", "import.sh"),
		"--address", filepath.Join(stack.LocalDir, "node", "containerd", "containerd.sock"), refs["NGINX_OPERATOR_ARCHIVE"])
	if out, err := imp.CombinedOutput(); err != nil {
		return &commandError{"importing " + refs["NGINX_OPERATOR_ARCHIVE"], err, out}
	}
	p.image = refs["NGINX_OPERATOR_IMAGE"]
	return nil
}

type commandError struct {
	what string
	err  error
	out  []byte
}

func (e *commandError) Error() string { return e.what + ": " + e.err.Error() + "\n" + string(e.out) }
