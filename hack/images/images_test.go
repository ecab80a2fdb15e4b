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

// Package images tests hack/images/build.sh: it builds the images as `make images` does
// and checks what is inside them by unpacking the archives and running their programs
// chroot'ed, nginx in a network namespace of its own.
package images

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

var semanticVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func TestImages(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: buildah's vfs store, chroot and namespaces")
	}
	if _, err := exec.LookPath("buildah"); err != nil {
		t.Skip("needs buildah (Debian: apt-get install buildah)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"nginx-operator", "pause", "nginx"}
	toolsDir := os.Getenv("TOOLS_BIN_DIR")
	if toolsDir == "" {
		toolsDir = filepath.Join(root, "hack/tools/bin")
	}
	withEtcd := fileExists(filepath.Join(toolsDir, "env.sh"))
	if withEtcd {
		names = append(names, "etcd")
	}

	headBeforeBuild := gitHead(root)
	// The images `make images` builds by default, for this machine only: the real-node suite
	// builds the same ones, so whichever runs first builds them and the other finds them cached.
	runBuild(t, root, names, nil)
	images := readImagesEnv(t, filepath.Join(root, "_output/images/images.env"))

	t.Run("nginx-operator", func(t *testing.T) {
		a, rootfs := unpackImage(t, images, "NGINX_OPERATOR")
		expectConfig(t, a, "65532:65532")
		labels := a.Config.Config.Labels
		for _, key := range []string{"title", "source", "licenses", "version", "revision"} {
			if labels["org.opencontainers.image."+key] == "" {
				t.Errorf("label org.opencontainers.image.%s is missing or empty: %v", key, labels)
			}
		}
		version := labels["org.opencontainers.image.version"]
		if !semanticVersion.MatchString(version) {
			t.Errorf("version label %q is not a semantic version", version)
		}
		if head := gitHead(root); head != headBeforeBuild {
			t.Logf("HEAD moved from %s to %s during the build; not comparing the revision label", headBeforeBuild, head)
		} else if got := labels["org.opencontainers.image.revision"]; head != "" && got != head {
			t.Errorf("revision label = %q, want HEAD %q", got, head)
		}
		for _, binary := range []string{"apiserver", "controller", "etcd-snapshot"} {
			expectStatic(t, filepath.Join(rootfs, binary))
		}
		// The nginx pods' sidecar has an image of its own.
		if _, err := os.Stat(filepath.Join(rootfs, "nginx-exporter")); !os.IsNotExist(err) {
			t.Errorf("/nginx-exporter is in the operator image (%v); it belongs in the nginx-exporter image only", err)
		}
		help := runChroot(t, rootfs, 65532, "/apiserver", "--help")
		expectContains(t, "/apiserver --help", help, "--etcd-servers", "--secure-port")
		help = runChroot(t, rootfs, 65532, "/controller", "--help")
		expectContains(t, "/controller --help", help, "-leader-elect", "-metrics-bind-address")
		// The backup CronJob's command (artifacts/overlays/components/etcd-backup).
		help = runChroot(t, rootfs, 65532, "/etcd-snapshot", "--help")
		expectContains(t, "/etcd-snapshot --help", help, "-endpoints", "-keep", "-dir")
		// The version was stamped into the binary, not only written on the label.
		stamped := runChroot(t, rootfs, 65532, "/apiserver", "--version")
		expectContains(t, "/apiserver --version", stamped, version, labels["org.opencontainers.image.revision"])
	})

	// The nginx pods' metrics and reload sidecar (spec.metrics), built with the operator
	// image from the same binaries: /nginx-exporter and nothing else.
	t.Run("nginx-exporter", func(t *testing.T) {
		a, rootfs := unpackImage(t, images, "NGINX_EXPORTER")
		expectConfig(t, a, "65532:65532")
		entries, err := os.ReadDir(rootfs)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"nginx-exporter"}) {
			t.Errorf("the image holds %v, want [nginx-exporter]", names)
		}
		expectStatic(t, filepath.Join(rootfs, "nginx-exporter"))
		// The controller's init container runs -help: it must exit 0.
		help := runChroot(t, rootfs, 65532, "/nginx-exporter", "-help")
		expectContains(t, "/nginx-exporter -help", help, "-listen-address", "-stub-status-url", "-reload-content-dir")
	})

	// Both images also as one index each for both architectures users run: compiling for
	// arm64 is paid here, where the index is the subject, after the shared images exist.
	t.Run("nginx-operator and nginx-exporter indexes for linux/amd64 and linux/arm64", func(t *testing.T) {
		runBuild(t, root, []string{"nginx-operator"}, []string{"PLATFORMS=linux/amd64 linux/arm64"})
		images := readImagesEnv(t, filepath.Join(root, "_output/images/images.env"))
		testIndex(t, images, "NGINX_OPERATOR", "apiserver", "controller", "etcd-snapshot")
		testIndex(t, images, "NGINX_EXPORTER", "nginx-exporter")
	})

	t.Run("pause", func(t *testing.T) {
		a, rootfs := unpackImage(t, images, "PAUSE")
		expectConfig(t, a, "65535:65535")
		if !slices.Equal(a.Config.Config.Entrypoint, []string{"/pause"}) {
			t.Errorf("entrypoint = %q, want [/pause]", a.Config.Config.Entrypoint)
		}
		expectStatic(t, filepath.Join(rootfs, "pause"))
		expectPauseStopsOnSIGTERM(t, rootfs)
	})

	t.Run("etcd", func(t *testing.T) {
		if !withEtcd {
			t.Skipf("no %s: the etcd image is built from the etcd `make tools` builds", filepath.Join(toolsDir, "env.sh"))
		}
		a, rootfs := unpackImage(t, images, "ETCD")
		expectConfig(t, a, "65532:65532")
		// artifacts/deploy/20-etcd.yaml runs `etcd`, found through the image's PATH.
		if !slices.ContainsFunc(a.Config.Config.Env, func(env string) bool {
			return env == "PATH=/usr/local/bin" || strings.HasPrefix(env, "PATH=/usr/local/bin:")
		}) {
			t.Errorf("env %q does not put /usr/local/bin on PATH", a.Config.Config.Env)
		}
		// Without a volume (docker run), etcd must be able to write its data directory.
		if info, err := os.Stat(filepath.Join(rootfs, "var/lib/etcd")); err != nil {
			t.Error(err)
		} else if st := info.Sys().(*syscall.Stat_t); st.Uid != 65532 || !info.IsDir() {
			t.Errorf("/var/lib/etcd is owned by uid %d (directory: %v), want a directory of 65532", st.Uid, info.IsDir())
		}
		want := a.Config.Config.Labels["org.opencontainers.image.version"]
		version := runChroot(t, rootfs, 65532, "/usr/local/bin/etcd", "--version")
		expectContains(t, "etcd --version", version, "etcd Version: "+want)
		// Member replacement, snapshots and restores run these in a pod of this image.
		for _, tool := range []string{"etcdctl", "etcdutl"} {
			version := runChroot(t, rootfs, 65532, "/usr/local/bin/"+tool, "version")
			expectContains(t, tool+" version", version, tool+" version: "+want)
		}
	})

	t.Run("nginx", func(t *testing.T) {
		a, rootfs := unpackImage(t, images, "NGINX")
		expectConfig(t, a, "")
		expectNginxServesWelcomePage(t, rootfs, a.Config.Config.Cmd, a.Config.Config.Env, nil, "80", "8080")
	})

	// Built with nginx: the same files as user 101, on 8080 only.
	t.Run("nginx-unprivileged", func(t *testing.T) {
		a, rootfs := unpackImage(t, images, "NGINX_UNPRIVILEGED")
		expectConfig(t, a, "101:101")
		expectNginxServesWelcomePage(t, rootfs, a.Config.Config.Cmd, a.Config.Config.Env, &syscall.Credential{Uid: 101, Gid: 101}, "8080")
	})

	t.Run("import into containerd", func(t *testing.T) {
		testImportIntoContainerd(t, root, images, append(names, "nginx-exporter"))
	})
}

// runBuild runs hack/images/build.sh for the named images with env added. A cold build
// compiles the product and downloads nginx's packages, so it may take whatever is left of
// go test's -timeout; it is stopped a little before, so that its output is still shown.
func runBuild(t *testing.T, root string, names, env []string) {
	t.Helper()
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Minute))
		defer cancel()
	}
	start := time.Now()
	build := exec.CommandContext(ctx, filepath.Join(root, "hack/images/build.sh"), names...)
	build.Dir = root
	build.Env = append(os.Environ(), env...)
	// Stopped by its process group: the compilers and buildah it started go with it.
	build.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	build.Cancel = func() error { return syscall.Kill(-build.Process.Pid, syscall.SIGKILL) }
	build.WaitDelay = 10 * time.Second
	out, err := build.CombinedOutput()
	t.Logf("%s hack/images/build.sh %s took %v:\n%s", strings.Join(env, " "), strings.Join(names, " "), time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("build.sh failed: %v", err)
	}
}

// readImagesEnv reads the NAME=value lines build.sh writes.
func readImagesEnv(t *testing.T, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

// unpackImage checks the archive of image <prefix> holds exactly that image and
// unpacks its root filesystem into a temporary directory.
func unpackImage(t *testing.T, images map[string]string, prefix string) (*dockerArchive, string) {
	t.Helper()
	ref, file := images[prefix+"_IMAGE"], images[prefix+"_ARCHIVE"]
	if ref == "" || file == "" {
		t.Fatalf("images.env names no %s_IMAGE or %s_ARCHIVE: %v", prefix, prefix, images)
	}
	a, err := readDockerArchive(file)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.RepoTags, []string{ref}) {
		t.Errorf("%s is tagged %q, want [%s]", file, a.RepoTags, ref)
	}
	if a.Config.OS != "linux" || a.Config.Architecture == "" {
		t.Errorf("platform %s/%s, want linux/<arch>", a.Config.OS, a.Config.Architecture)
	}
	rootfs := t.TempDir()
	if err := a.unpack(rootfs); err != nil {
		t.Fatal(err)
	}
	return a, rootfs
}

func expectConfig(t *testing.T, a *dockerArchive, user string) {
	t.Helper()
	if a.Config.Config.User != user {
		t.Errorf("user = %q, want %q", a.Config.Config.User, user)
	}
	if a.Config.Config.Labels["org.opencontainers.image.version"] == "" {
		t.Errorf("no org.opencontainers.image.version label: %v", a.Config.Config.Labels)
	}
}

// expectStatic fails unless file is an ELF executable without interpreter or libraries:
// only such a binary runs on scratch.
func expectStatic(t *testing.T, file string) {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a dynamic loader (PT_INTERP): not static", filepath.Base(file))
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v (%v): not static", filepath.Base(file), libs, err)
	}
}

// runChroot runs a program of the image as uid:uid and returns its output; it must succeed.
func runChroot(t *testing.T, rootfs string, uid uint32, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = "/"
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in the image: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func expectContains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not print %q:\n%s", what, w, got)
		}
	}
}

func expectPauseStopsOnSIGTERM(t *testing.T, rootfs string) {
	cmd := exec.Command("/pause")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: 65535, Gid: 65535}, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() { // it warns that it is not PID 1 once it handles signals
		t.Fatalf("pause printed nothing: %v", lines.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	if err := waitWithTimeout(cmd, time.Minute); err != nil {
		t.Fatalf("pause after SIGTERM: %v, want exit status 0", err)
	}
}

// expectNginxServesWelcomePage starts the image's command chroot'ed in isolated
// namespaces, as user (nil: root), and fetches / from every port.
func expectNginxServesWelcomePage(t *testing.T, rootfs string, command, env []string, user *syscall.Credential, ports ...string) {
	if len(command) == 0 {
		t.Fatal("the nginx image has no command")
	}
	var logs lockedBuffer
	err := inIsolatedNamespaces(func() error {
		if err := mountRuntimeFilesystems(rootfs); err != nil {
			return err
		}
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Dir = "/"
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Pdeathsig: syscall.SIGKILL, Credential: user}
		// nginx reopens its output as /dev/stdout and /dev/stderr: as another user it can
		// only if that user owns the pipe, as a container runtime arranges for its FIFOs.
		out, in, err := os.Pipe()
		if err != nil {
			return err
		}
		defer out.Close()
		if user != nil {
			if err := in.Chown(int(user.Uid), int(user.Gid)); err != nil {
				return err
			}
		}
		cmd.Stdout, cmd.Stderr = in, in
		copied := make(chan struct{})
		go func() { _, _ = io.Copy(&logs, out); close(copied) }()
		err = cmd.Start()
		in.Close()
		if err != nil {
			return err
		}
		defer func() {
			_ = cmd.Process.Kill()
			select { // the last lines, once every nginx process has closed the pipe
			case <-copied:
			case <-time.After(10 * time.Second):
			}
		}()
		for _, port := range ports {
			var status int
			var body string
			var err error
			// The condition runs on this goroutine, so in nginx's network namespace.
			_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
				status, body, err = httpGet("127.0.0.1:" + port)
				return err == nil, nil
			})
			if err != nil {
				t.Errorf("GET http://127.0.0.1:%s/: %v", port, err)
				continue
			}
			if status != 200 || !strings.Contains(body, "Welcome to nginx!") {
				t.Errorf("GET http://127.0.0.1:%s/ = %d, want 200 with the welcome page:\n%s", port, status, body)
			}
		}
		// SIGQUIT, the image's stop signal: a graceful stop with exit status 0.
		if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
			return err
		}
		if err := waitWithTimeout(cmd, time.Minute); err != nil {
			t.Errorf("nginx after SIGQUIT: %v, want exit status 0", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The access log goes to stdout, where kubectl logs finds it.
	if n := strings.Count(logs.String(), `"GET / HTTP/1.0" 200`); n != len(ports) {
		t.Errorf("nginx logged %d successful GETs, want %d:\n%s", n, len(ports), logs.String())
	}
}

func waitWithTimeout(cmd *exec.Cmd, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done //nolint:errcheck // Wait's error after the kill says only that it was killed
		return context.DeadlineExceeded
	}
}

// gitHead is the commit checked out in root, or "" outside a git checkout.
func gitHead(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func fileExists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testIndex checks the OCI image index of the image whose images.env prefix is prefix: one
// image per platform under the single image's reference, each with the static binaries
// named, of its own architecture, and the same configuration, and runs the first binary
// of this machine's.
func testIndex(t *testing.T, images map[string]string, prefix string, binaries ...string) {
	file := images[prefix+"_INDEX_ARCHIVE"]
	if file == "" {
		t.Fatalf("images.env names no %s_INDEX_ARCHIVE: %v", prefix, images)
	}
	index, err := readOCIIndexArchive(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := images[prefix+"_IMAGE"]; index.Ref != want {
		t.Errorf("the index is named %q, want the image's reference %q", index.Ref, want)
	}
	machines := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}
	var platforms []string
	ranHere := false
	for _, img := range index.Images {
		platforms = append(platforms, img.Platform)
		if got := img.Config.OS + "/" + img.Config.Architecture; got != img.Platform {
			t.Errorf("%s: the image's configuration says %s", img.Platform, got)
		}
		if img.Config.Config.User != "65532:65532" || img.Config.Config.Labels["org.opencontainers.image.version"] == "" {
			t.Errorf("%s: user %q, labels %v", img.Platform, img.Config.Config.User, img.Config.Config.Labels)
		}
		rootfs := t.TempDir()
		if err := index.unpack(img, rootfs); err != nil {
			t.Fatal(err)
		}
		for _, binary := range binaries {
			expectStatic(t, filepath.Join(rootfs, binary))
			if f, err := elf.Open(filepath.Join(rootfs, binary)); err != nil {
				t.Error(err)
			} else {
				if f.Machine != machines[img.Platform] {
					t.Errorf("%s: /%s is built for %s, want %s", img.Platform, binary, f.Machine, machines[img.Platform])
				}
				f.Close()
			}
		}
		if img.Platform == "linux/"+runtime.GOARCH {
			ranHere = true
			version := img.Config.Config.Labels["org.opencontainers.image.version"]
			if binaries[0] == "apiserver" {
				out := runChroot(t, rootfs, 65532, "/apiserver", "--version")
				expectContains(t, img.Platform+" /apiserver --version", out, version)
				t.Logf("%s /apiserver --version: %s", img.Platform, strings.TrimSpace(out))
			} else {
				runChroot(t, rootfs, 65532, "/"+binaries[0], "-help")
			}
		}
	}
	slices.Sort(platforms)
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the index holds %v, want %v", platforms, want)
	}
	if !ranHere {
		t.Errorf("no image of the index is for this machine (linux/%s)", runtime.GOARCH)
	}

	// README's push command is skopeo copy --all from this archive; here the copy goes to
	// an OCI layout on disk instead of a registry, and must carry both images.
	if _, err := exec.LookPath("skopeo"); err != nil {
		t.Skip("needs skopeo (Debian: apt-get install skopeo) for the copy README shows")
	}
	dest := t.TempDir()
	out, err := exec.Command("skopeo", "copy", "--all", "--preserve-digests", "oci-archive:"+file, "oci:"+dest+":copied").CombinedOutput()
	if err != nil {
		t.Fatalf("skopeo copy --all: %v\n%s", err, out)
	}
	copied, want := 0, 0
	for _, img := range index.Images {
		for _, layer := range img.layers {
			want++
			if fileExists(filepath.Join(dest, filepath.FromSlash(layer))) {
				copied++
			}
		}
	}
	if copied != want {
		t.Errorf("skopeo copied %d of the %d layers of the index", copied, want)
	}
}
