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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// ProductBinary returns a command of the product (pkg of the module at moduleDir, such as
// ./cmd/apiserver of the checkout) built with ldflags. Unstamped, it is the Makefile's own
// bin/<name> of repoRoot, which make test builds before its suites (make build); stamped,
// it goes to a directory of its own under _output/test-bin named by what was asked. Either
// way every suite of a make test that asks for the same binary gets the same file, built
// once and kept between runs: go build links again only when the sources changed, and a
// suite that asks while another builds it waits for that build.
func ProductBinary(repoRoot, moduleDir, pkg string, ldflags ...string) (string, error) {
	name := filepath.Base(filepath.Clean(filepath.Join(moduleDir, pkg)))
	dir := filepath.Join(repoRoot, "bin")
	if len(ldflags) > 0 {
		key := sha256.Sum256([]byte(strings.Join(append([]string{name}, ldflags...), "\x00")))
		dir = filepath.Join(repoRoot, "_output", "test-bin", hex.EncodeToString(key[:6]))
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	binary := filepath.Join(dir, name)
	err = withFileLock(dir, func() error { return BuildProduct(moduleDir, binary, pkg, ldflags...) })
	return binary, err
}

// withFileLock runs fn holding an exclusive lock on dir (created; the lock is its file
// .lock) that other processes asking for the same directory wait on.
func withFileLock(dir string, fn func() error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	return fn()
}
