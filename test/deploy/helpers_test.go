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
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	"github.com/example/nginx-operator/test/framework"
)

func mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	return kc.Must(t, stdin, args...)
}
func kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return kc.Run(t, stdin, args...)
}
func get(t *testing.T, args ...string) string {
	t.Helper()
	return kc.Get(t, args...)
}
func waitFor(t *testing.T, timeout time.Duration, what string, done func() bool) time.Duration {
	t.Helper()
	return framework.WaitFor(t, timeout, what, done)
}

func operatorClient(t *testing.T) clientset.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// images reads the image references and archives hack/images/build.sh recorded.
func images(t *testing.T) map[string]string {
	t.Helper()
	refs, err := readImagesEnv(filepath.Join(stack.RepoRoot, "_output", "images", "images.env"))
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// readImagesEnv reads the images.env that hack/images/build.sh writes.
func readImagesEnv(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			refs[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return refs, nil
}

// nodeIP is the real node's address on its bridge (hack/lib-node.sh).
const nodeIP = "10.88.0.1"

// httpGet fetches a page from a node, pod or service address of the local node: "/" of
// host:port, or host:port/path. Those addresses exist only on this machine, and the
// node's guards drop anything for them that would leave it. Each call opens a connection
// of its own: a kept-alive one would go on reaching a pod through a Service port that
// kube-proxy no longer routes, and would pin a Service's traffic to one pod.
func httpGet(addr string) (string, error) {
	path := "/"
	if i := strings.Index(addr, "/"); i >= 0 {
		addr, path = addr[:i], addr[i:]
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip == nil || !(localNet.Contains(ip) || serviceNet.Contains(ip)) {
		return "", fmt.Errorf("%s is not an address of the local node", addr)
	}
	resp, err := oneShotClient.Get("http://" + addr + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

var oneShotClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

var (
	_, localNet, _   = net.ParseCIDR("10.88.0.0/16")
	_, serviceNet, _ = net.ParseCIDR("10.96.0.0/16")
)

// waitForWelcome waits until nginx's welcome page is served at addr; a new ClusterIP
// or NodePort refuses connections for a moment after its endpoints appear.
func waitForWelcome(t *testing.T, addr string) time.Duration {
	t.Helper()
	start := time.Now()
	var last error
	if !framework.Poll(2*time.Minute, 500*time.Millisecond, func() bool {
		body, err := httpGet(addr)
		last = err
		return err == nil && strings.Contains(body, "Welcome to nginx!")
	}) {
		t.Fatalf("no nginx welcome page at %s after 2m (last error: %v)", addr, last)
	}
	return time.Since(start)
}

func kubeClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
