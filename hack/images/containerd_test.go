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

package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// testImportIntoContainerd starts a containerd of its own, imports the archives with
// hack/images/import.sh as the real node does, and checks every image is there and
// unpacked, so the CRI can run it.
func testImportIntoContainerd(t *testing.T, root string, images map[string]string, names []string) {
	for _, bin := range []string{"containerd", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s (Debian: apt-get install containerd)", bin)
		}
	}
	address := startContainerd(t)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var archives []string
	for _, name := range names {
		archives = append(archives, images[envPrefix(name)+"_ARCHIVE"])
	}
	start := time.Now()
	out, err := exec.CommandContext(ctx, filepath.Join(root, "hack/images/import.sh"),
		append([]string{"--address", address}, archives...)...).CombinedOutput()
	t.Logf("import.sh took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("import.sh: %v", err)
	}

	// `ctr images check` lists REF TYPE DIGEST STATUS SIZE UNPACKED.
	out, err = exec.CommandContext(ctx, "ctr", "--address", address, "-n", "k8s.io", "images", "check").CombinedOutput()
	if err != nil {
		t.Fatalf("ctr images check: %v\n%s", err, out)
	}
	for _, name := range names {
		ref := images[envPrefix(name)+"_IMAGE"]
		var line string
		for _, l := range strings.Split(string(out), "\n") {
			if fields := strings.Fields(l); len(fields) > 0 && fields[0] == ref {
				line = l
			}
		}
		switch {
		case line == "":
			t.Errorf("containerd has no %s after the import:\n%s", ref, out)
		case !strings.Contains(line, "complete") || !strings.HasSuffix(strings.TrimSpace(line), "true"):
			t.Errorf("%s is not complete and unpacked: %s", ref, line)
		}
	}
}

// startContainerd runs containerd with its root, state and socket in a temporary
// directory and the CRI plugin off; it is stopped by PID when the test ends.
func startContainerd(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "images-containerd-") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	address := filepath.Join(dir, "containerd.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), address, filepath.Join(dir, "opt"))
	configFile := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", configFile)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := waitWithTimeout(cmd, 30*time.Second); err != nil {
			t.Logf("containerd (pid %d) stopped: %v", cmd.Process.Pid, err)
		}
		logFile.Close()
		if t.Failed() {
			if log, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("containerd log:\n%s", log)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing containerd's directory: %v", err)
		}
	})
	var lastErr error
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		lastErr = exec.Command("ctr", "--address", address, "version").Run()
		return lastErr == nil, nil
	}); err != nil {
		t.Fatalf("containerd did not answer on %s within a minute: %v", address, lastErr)
	}
	return address
}

// envPrefix is the images.env prefix of an image: nginx-operator -> NGINX_OPERATOR.
func envPrefix(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}
