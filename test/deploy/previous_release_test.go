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
	"sync"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// previousRelease is the release upgrades start from (hack/previous-release): its
// tree, with its chart, and its operator image, built by its own hack/images/build.sh
// and imported into the node's containerd. The build starts with the walk and runs
// beside the first steps (startPreviousRelease); the Helm step waits for it.
var previousRelease struct {
	once    sync.Once
	done    chan struct{}
	release framework.Release
	tree    string // the release's checkout: charts/nginx-operator
	image   string
	err     error
}

// startPreviousRelease builds the previous release's operator image in the background.
func startPreviousRelease(t *testing.T) {
	previousRelease.once.Do(func() {
		previousRelease.done = make(chan struct{})
		tree, err := os.MkdirTemp("", "nginx-operator-previous-release-")
		if err != nil {
			previousRelease.err = err
			close(previousRelease.done)
			return
		}
		t.Cleanup(func() { os.RemoveAll(tree) })
		go func() {
			defer close(previousRelease.done)
			previousRelease.tree = tree
			previousRelease.image, previousRelease.err = buildPreviousRelease(tree)
		}()
	})
}

// waitPreviousRelease waits for the build startPreviousRelease began.
func waitPreviousRelease(t *testing.T) (framework.Release, string, string) {
	t.Helper()
	startPreviousRelease(t)
	start := time.Now()
	<-previousRelease.done
	if previousRelease.err != nil {
		t.Fatalf("the previous release: %v", previousRelease.err)
	}
	t.Logf("the previous release %s (%s) is %s; waited %s for its build", previousRelease.release.Version, previousRelease.release.Commit,
		previousRelease.image, framework.Describe(time.Since(start)))
	return previousRelease.release, previousRelease.tree, previousRelease.image
}

func buildPreviousRelease(tree string) (string, error) {
	release, err := framework.PreviousRelease(stack.RepoRoot)
	if err != nil {
		return "", err
	}
	previousRelease.release = release
	if err := release.CheckOut(stack.RepoRoot, tree); err != nil {
		return "", err
	}
	// Its own build script, as its release was built; the tag is its version.
	build := exec.Command(filepath.Join(tree, "hack", "images", "build.sh"), "nginx-operator")
	build.Dir = tree
	build.Env = append(slices.Clone(stack.Env()), "VERSION="+release.Version, "IMAGE_TAG="+release.Version)
	if out, err := build.CombinedOutput(); err != nil {
		return "", &commandError{"building the operator image of " + release.Version, err, out}
	}
	refs, err := readImagesEnv(filepath.Join(tree, "_output", "images", "images.env"))
	if err != nil {
		return "", err
	}
	imp := exec.Command(filepath.Join(stack.RepoRoot, "hack", "images", "import.sh"),
		"--address", filepath.Join(stack.LocalDir, "node", "containerd", "containerd.sock"), refs["NGINX_OPERATOR_ARCHIVE"])
	if out, err := imp.CombinedOutput(); err != nil {
		return "", &commandError{"importing " + refs["NGINX_OPERATOR_ARCHIVE"], err, out}
	}
	return refs["NGINX_OPERATOR_IMAGE"], nil
}

type commandError struct {
	what string
	err  error
	out  []byte
}

func (e *commandError) Error() string { return e.what + ": " + e.err.Error() + "\n" + string(e.out) }
