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

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestLogHoldsNoBearerToken sends a ServiceAccount's bearer token to our apiserver, which
// runs delegated as it does in a cluster: directly (it asks the kube-apiserver with a
// TokenReview) and through the aggregator. The stack's apiserver, at the verbosity the
// stack runs it with, must not log the token, nor a copy at -v=7. A copy at -v=8 does:
// client-go logs the bodies of the requests it sends from -v=8 on, the TokenReview's
// spec.token among them, which is why docs/security.md says to stay at -v=7 or below.
func TestLogHoldsNoBearerToken(t *testing.T) {
	t.Parallel()
	ns := "log-secrets"
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--wait=false") })
	mustKubectl(t, "", "-n", ns, "create", "serviceaccount", "reader")
	mustKubectl(t, "", "-n", ns, "create", "role", "reader", "--verb=get,list", "--resource=nginxoperators.operator.example.com")
	mustKubectl(t, "", "-n", ns, "create", "rolebinding", "reader", "--role=reader", "--serviceaccount="+ns+":reader")
	token := strings.TrimSpace(mustKubectl(t, "", "-n", ns, "create", "token", "reader", "--duration=10m"))
	// A JWT: header.payload.signature. The signature alone is secret enough to look for.
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("kubectl create token printed no JWT: %q", token)
	}
	secrets := map[string]string{"the token": token, "its signature": parts[2]}

	args, err := processArgs(filepath.Join(localDir, "pids", "nginx-operator-apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(localDir, "logs", "nginx-operator-apiserver.log")
	before := fileSize(t, logFile)
	path := "/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators"
	sendToken(t, operatorURL(path), token)
	sendToken(t, kubeURL(path), token)
	// A request's own log line is written after the response. The copies below log every
	// request from -v=3 on (httplog's "HTTP" line), so they are read once that line is
	// there; the stack's server, at a lower -v, has no such line to wait for, so its log is
	// read last, after the copies have started and answered.
	defer func() {
		written := readFrom(t, logFile, before)
		t.Logf("our apiserver at -v=%d (the stack's): %d log bytes written since the requests", verbosity(args), len(written))
		if found := leaked(written, secrets); len(found) > 0 {
			t.Errorf("our apiserver at -v=%d logged %v of a ServiceAccount", verbosity(args), found)
		}
	}()

	// Copies of the same server: at -v=7 (the most the docs advise) client-go logs the
	// headers of its requests, masked, and still no token; at -v=8 it logs their bodies, so
	// the TokenReview's spec.token, and the same check finds it.
	for _, level := range []int{7, 8} {
		verbose := startVerboseCopy(t, args, level)
		sendToken(t, fmt.Sprintf("https://127.0.0.1:%d%s", verbose.port, path), token)
		waitFor(t, 3*time.Minute, fmt.Sprintf("the -v=%d copy's log line of the request", level), func() bool {
			return strings.Contains(readFrom(t, verbose.log, 0), `URI="`+path)
		})
		text := readFrom(t, verbose.log, 0)
		found := leaked(text, secrets)
		t.Logf("our apiserver at -v=%d: %d log bytes, holds %v", level, len(text), found)
		switch {
		case level <= 7 && len(found) > 0:
			t.Errorf("our apiserver at -v=%d logged %v of a ServiceAccount: %.300s", level, found, lineWith(text, parts[2]))
		case level >= 8 && len(found) != len(secrets):
			t.Errorf("our apiserver at -v=%d logged %v, want the token in its TokenReview: either client-go stopped logging request bodies at -v=8 (docs/security.md says it does) or this check cannot see a token", level, found)
		case level >= 8:
			line := lineWith(text, parts[2])
			if !strings.Contains(line, `"kind":"TokenReview"`) {
				t.Errorf("at -v=%d the token shows up outside a TokenReview: %.300s", level, line)
			}
			t.Logf("at -v=%d the token is in the log, in: %.100s...", level, strings.TrimSpace(line))
		}
	}
}

// leaked names the secrets text holds, sorted.
func leaked(text string, secrets map[string]string) []string {
	var found []string
	for what, s := range secrets {
		if strings.Contains(text, s) {
			found = append(found, what)
		}
	}
	slices.Sort(found)
	return found
}

// sendToken GETs url with the bearer token and requires 200: the server authenticated
// and authorized the ServiceAccount.
func sendToken(t *testing.T, url, token string) {
	t.Helper()
	code, body, _ := do(t, httpClient(t, ""), http.MethodGet, url, map[string]string{"Authorization": "Bearer " + token}, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s with the ServiceAccount's token: %d %s", url, code, body)
	}
	t.Logf("GET %s with the ServiceAccount's token: %d", url, code)
}

// verbosity is the -v (or --v) on a command line, 0 without one.
func verbosity(args []string) int {
	for i, a := range args {
		for _, name := range []string{"-v", "--v"} {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
			if a == name && i+1 < len(args) {
				n, _ := strconv.Atoi(args[i+1])
				return n
			}
		}
	}
	return 0
}

type verboseInstance struct {
	port int
	log  string
}

// startVerboseCopy starts our apiserver with the stack's command line on another port,
// with its own embedded etcd directory and -v=level, and stops it by PID at cleanup. A
// port taken between the probe and the bind is retried.
func startVerboseCopy(t *testing.T, args []string, level int) verboseInstance {
	t.Helper()
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		port := framework.MustFreePort(t)
		inst := verboseInstance{port: port, log: filepath.Join(dir, fmt.Sprintf("apiserver-%d.log", attempt))}
		cmdline := replaceFlag(args, "--secure-port", strconv.Itoa(port))
		cmdline = replaceFlag(cmdline, "--data-dir", filepath.Join(dir, fmt.Sprintf("data-%d", attempt)))
		cmdline = append(cmdline, fmt.Sprintf("-v=%d", level))
		proc, err := framework.StartProcess(inst.log, cmdline...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { proc.Stop(syscall.SIGTERM, 30*time.Second) })
		start := time.Now()
		client := httpClient(t, "")
		err = proc.WaitUntil(2*time.Minute, time.Second, func() bool {
			resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		if err == nil {
			t.Logf("our apiserver at -v=%d on port %d ready in %s", level, port, time.Since(start).Round(time.Millisecond))
			return inst
		}
		if attempt < 3 && errors.Is(err, framework.ErrPortTaken) {
			continue
		}
		t.Fatalf("our apiserver at -v=%d did not become ready: %v; its log ends:\n%s", level, err, tail(readFrom(t, inst.log, 0), 30))
	}
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// readFrom returns the file's content from offset on.
func readFrom(t *testing.T, name string, offset int64) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if offset > int64(len(data)) {
		return ""
	}
	return string(data[offset:])
}

func lineWith(text, s string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

func tail(text string, lines int) string {
	all := strings.Split(text, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
