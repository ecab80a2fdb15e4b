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
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// registryRelease is this tree cut as a release (make release, signed with a key made
// for the test), pushed to an OCI registry on loopback with TLS (hack/release-push.sh),
// its image signatures verified there with cosign, and the node's containerd told to
// trust the registry: what the Helm test upgrades to, pulled from it by digest. Made in
// the background from the start of a run that has the Helm test (prefetch).
var registryRelease = newRegistryBuild()

type registryBuild struct {
	build
	registry *framework.Registry
	version  string
	chart    string            // oci://<host>/charts/nginx-operator
	images   map[string]string // image name (nginx-operator, etcd) -> <host>/<repository>@<digest>
}

func newRegistryBuild() *registryBuild {
	r := &registryBuild{}
	r.what, r.run = "this tree's release in a registry", r.cutAndPush
	return r
}

// releaseTools are the pinned binaries the release is cut, pushed and checked with.
type releaseTools struct{ registry, cosign string }

// cutAndPush cuts the release into a temporary directory, starts the registry and pushes
// the release to it.
func (r *registryBuild) cutAndPush() error {
	var tools releaseTools
	var err error
	if tools.registry, err = framework.Tool("REGISTRY_BIN"); err != nil {
		return err
	}
	if tools.cosign, err = framework.Tool("COSIGN_BIN"); err != nil {
		return err
	}
	refs, err := readImagesEnv(filepath.Join(stack.RepoRoot, "_output", "images", "images.env"))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "nginx-operator-registry-release-")
	if err != nil {
		return err
	}
	r.cleanup = func() {
		if r.registry != nil {
			r.registry.Stop()
		}
		os.RemoveAll(dir)
	}
	// The release gets a version of its own: an image identical to the node's local one
	// would share its image ID, which containerd 1.6's CRI then no longer finds by the
	// local name (the OLM test's pods could not start), and its pull would prove nothing.
	r.version = tag(refs["NGINX_OPERATOR_IMAGE"]) + "-registry"
	return r.cutAndPushTo(tools, dir, r.version)
}

// waitRegistryRelease needs the release in the registry and returns its chart, version,
// images and the registry's CA.
func waitRegistryRelease(t *testing.T) (chart, version string, images map[string]string, caFile string) {
	t.Helper()
	need(t, registryRelease)
	t.Logf("release %s in the registry %s: chart %s, images %v", registryRelease.version, registryRelease.registry.Host,
		registryRelease.chart, registryRelease.images)
	return registryRelease.chart, registryRelease.version, registryRelease.images, registryRelease.registry.CAFile
}

// cutAndPushTo cuts the release as version into dir, starts the registry, pushes the
// release to it and checks it there.
func (r *registryBuild) cutAndPushTo(tools releaseTools, dir, version string) error {
	run := func(what string, env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = stack.RepoRoot, append(append(slices.Clone(stack.Env()), "TUF_ROOT="+filepath.Join(dir, "sigstore"), "TUF_MIRROR=file:///nonexistent"), env...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), &commandError{what, err, out}
		}
		fmt.Fprintf(os.Stderr, "registry release: %s in %s\n", what, framework.Describe(time.Since(start)))
		return string(out), nil
	}
	password := "COSIGN_PASSWORD=release-test"
	for _, prefix := range []string{"cosign", "other"} {
		if _, err := run("a key pair", []string{password}, tools.cosign, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, prefix)); err != nil {
			return err
		}
	}
	// hack/release.sh records its images in a file of its own, so the shared images.env
	// keeps naming what the suite deploys.
	if _, err := run("make release", []string{"VERSION=" + version, "KEY=" + filepath.Join(dir, "cosign.key"), password,
		"RELEASE_OUTPUT=" + filepath.Join(dir, "release")}, filepath.Join(stack.RepoRoot, "hack", "release.sh")); err != nil {
		return err
	}
	releaseDir := filepath.Join(dir, "release", version)

	err := os.MkdirAll(filepath.Join(dir, "registry"), 0o755)
	if err != nil {
		return err
	}
	if r.registry, err = framework.StartRegistry(tools.registry, filepath.Join(dir, "registry")); err != nil {
		return err
	}
	host, ca := r.registry.Host, r.registry.CAFile
	out, err := run("hack/release-push.sh", []string{"CA_FILE=" + ca}, filepath.Join(stack.RepoRoot, "hack", "release-push.sh"), host, releaseDir)
	if err != nil {
		return err
	}
	// "pushed  <host>/<repository>:<tag>@<digest> (<name>, signature attached)" per image.
	r.images = map[string]string{}
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		f := strings.Fields(scanner.Text())
		if len(f) >= 3 && f[0] == "pushed" && strings.HasPrefix(f[2], "(") && !strings.HasPrefix(f[1], "oci://") {
			ref, name := f[1], strings.TrimSuffix(strings.TrimPrefix(f[2], "("), ",")
			repository, digest, _ := strings.Cut(ref, "@")
			r.images[name] = repository[:strings.LastIndex(repository, ":")] + "@" + digest
		}
	}
	if len(r.images) != 3 {
		return fmt.Errorf("hack/release-push.sh pushed %v, want nginx-operator, nginx-exporter and etcd:\n%s", r.images, out)
	}
	r.chart = "oci://" + host + "/charts/nginx-operator"

	// Signatures checked in the registry before anything runs the images: with the
	// release's key they verify, with another key they must not.
	for _, ref := range r.images {
		verify := func(key string) error {
			_, err := run("cosign verify "+ref+" with "+filepath.Base(key), nil, tools.cosign, "verify", "--key", key,
				"--insecure-ignore-tlog", "--registry-cacert", ca, ref)
			return err
		}
		if err := verify(filepath.Join(dir, "cosign.pub")); err != nil {
			return err
		}
		if err := verify(filepath.Join(dir, "other.pub")); err == nil {
			return fmt.Errorf("cosign verify %s accepted a key that did not sign it", ref)
		}
	}

	// The node's containerd reads a hosts.toml per registry at each pull (hack/lib-node.sh).
	hosts := filepath.Join(stack.LocalDir, "node", "containerd", "certs.d", host)
	if err := os.MkdirAll(hosts, 0o755); err != nil {
		return err
	}
	var toml bytes.Buffer
	fmt.Fprintf(&toml, "server = %q\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n", "https://"+host, "https://"+host, ca)
	return os.WriteFile(filepath.Join(hosts, "hosts.toml"), toml.Bytes(), 0o644)
}
