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
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Release names a release of the product and the commit it is built from.
type Release struct {
	Version string
	Commit  string
}

// MajorMinor is r's release line as --emulated-version takes it: v0.1.0 -> 0.1.
func (r Release) MajorMinor() string {
	v, _, _ := strings.Cut(strings.TrimPrefix(r.Version, "v"), "-")
	if i := strings.LastIndex(v, "."); i >= 0 {
		v = v[:i]
	}
	return v
}

// PreviousRelease reads hack/previous-release: the release upgrades are tested from.
func PreviousRelease(repoRoot string) (Release, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "hack", "previous-release"))
	if err != nil {
		return Release{}, err
	}
	var r Release
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for scanner.Scan() {
		key, value, _ := strings.Cut(strings.TrimSpace(scanner.Text()), "=")
		switch key {
		case "version":
			r.Version = value
		case "commit":
			r.Commit = value
		}
	}
	if r.Version == "" || r.Commit == "" {
		return Release{}, fmt.Errorf("hack/previous-release names no version and commit")
	}
	return r, nil
}

// CheckOut writes the tree of r's commit into dir, from the history of repoRoot: a
// clone made with --depth lacks it and says so.
func (r Release) CheckOut(repoRoot, dir string) error {
	archive := exec.Command("git", "-C", repoRoot, "archive", "--format=tar", r.Commit)
	var stderr bytes.Buffer
	archive.Stderr = &stderr
	tar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	tar.Stdin = pipe
	if err := tar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		_ = tar.Wait()
		return fmt.Errorf("git archive %s (release %s; a shallow clone needs `git fetch --unshallow`): %w: %s", r.Commit, r.Version, err, stderr.String())
	}
	return tar.Wait()
}

// Binary returns a command of release r (such as ./cmd/apiserver) built as BuildProduct
// builds, stamped with r's version, into repoRoot's _output/test-bin: a release's commit
// never changes, so it is built once and kept between runs.
func (r Release) Binary(repoRoot, pkg string) (string, error) {
	dir, err := filepath.Abs(filepath.Join(repoRoot, "_output", "test-bin", "release-"+r.Version+"-"+r.Commit))
	if err != nil {
		return "", err
	}
	binary := filepath.Join(dir, filepath.Base(pkg))
	err = withFileLock(dir, func() error {
		if _, err := os.Stat(binary); err == nil {
			return nil
		}
		src, err := os.MkdirTemp("", "nginx-operator-"+r.Version+"-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(src)
		if err := r.CheckOut(repoRoot, src); err != nil {
			return err
		}
		// Built beside and renamed: a build cut short leaves no binary that looks whole.
		if err := BuildProduct(src, binary+".new", pkg, "-X github.com/example/nginx-operator/pkg/version.gitVersion="+r.Version); err != nil {
			return err
		}
		return os.Rename(binary+".new", binary)
	})
	return binary, err
}
