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
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/test/framework"
)

// reloadConf is nginxConf that also includes the status server (for the metrics sidecar)
// and serves /slow.txt at 16 KiB/s: a long-lived download. extra goes into the server block.
func reloadConf(extra string) string {
	return strings.Replace(nginxConf(`location = /slow.txt { limit_rate 16k; }
    `+extra), "include /etc/nginx/mime.types;", "include /etc/nginx/mime.types;\n  include /etc/nginx/nginx-operator/*.conf;", 1)
}

// slowSize is /slow.txt: 640 KiB, 40 s at 16 KiB/s, longer than a pod's 30 s of
// termination grace.
const slowSize = 640 << 10

// siteContent is the ConfigMap of index.html and /slow.txt, applied server-side: a
// client-side apply would copy the 640 KiB into an annotation, over its limit.
func siteContent(name, version string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: default}
data:
  index.html: "content %s\n"
  slow.txt: %q
`, name, version, strings.Repeat("s", slowSize))
}

// clientLoop requests a page through an address 50 times a second and counts the answers.
type clientLoop struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	failures   []string
	seen       map[string]int
	last       map[string]time.Time // when each answer was last seen
	stop, done chan struct{}
}

func startClientLoop(addr string) *clientLoop {
	l := &clientLoop{seen: map[string]int{}, last: map[string]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		pace := time.NewTicker(20 * time.Millisecond) // a rate limit
		defer pace.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-pace.C:
			}
			body, err := httpGet(addr)
			l.mu.Lock()
			if err != nil {
				l.failed.Add(1)
				l.failures = append(l.failures, err.Error())
			} else {
				l.ok.Add(1)
				l.seen[strings.TrimSpace(body)]++
				l.last[strings.TrimSpace(body)] = time.Now()
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// finish keeps the loop going for n more requests (the pods that go, going), then stops it.
func (l *clientLoop) finish(t *testing.T, n int64) {
	t.Helper()
	after := l.ok.Load() + l.failed.Load()
	if !framework.Poll(2*time.Minute, 100*time.Millisecond, func() bool { return l.ok.Load()+l.failed.Load()-after >= n }) {
		t.Errorf("the client loop sent %d requests in 2m, want %d", l.ok.Load()+l.failed.Load()-after, n)
	}
	close(l.stop)
	<-l.done
}

// lastSeen is when the loop last got answer.
func (l *clientLoop) lastSeen(answer string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last[answer]
}

func (l *clientLoop) report() (ok, failed int64, seen map[string]int, failures []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ok.Load(), l.failed.Load(), l.seen, l.failures[:min(len(l.failures), 5)]
}

// download is a long-lived GET: its result arrives when the body is read to the end.
type download struct {
	bytes int64
	err   error
}

func startDownload(addr, path string) <-chan download {
	result := make(chan download, 1)
	go func() {
		if ip := net.ParseIP(strings.Split(addr, ":")[0]); ip == nil || !serviceNet.Contains(ip) {
			result <- download{err: fmt.Errorf("%s is not a service address of the local node", addr)}
			return
		}
		c := http.Client{Timeout: 3 * time.Minute}
		resp, err := c.Get("http://" + addr + path)
		if err != nil {
			result <- download{err: err}
			return
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		result <- download{bytes: n, err: err}
	}()
	return result
}

// serviceAnswers waits until the Service answers want on / (any page when want is ""): a
// new ClusterIP refuses connections for a moment after its endpoints appear.
func serviceAnswers(t *testing.T, clusterIP, want string) {
	t.Helper()
	waitFor(t, 3*time.Minute, "the Service to answer", func() bool {
		body, err := httpGet(clusterIP + ":80")
		return err == nil && (want == "" || body == want)
	})
}

// kept reports whether a download ended with every byte.
func (d download) kept() bool { return d.err == nil && d.bytes == slowSize }

// nginxPod is what a content change must not change of a pod.
type nginxPod struct {
	name, uid, ip string
	restarts      int32
}

func nginxPods(t *testing.T, instance string) []nginxPod {
	t.Helper()
	list, err := kubeClient(t).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + instance})
	if err != nil {
		t.Fatal(err)
	}
	var pods []nginxPod
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			continue
		}
		var restarts int32
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
		pods = append(pods, nginxPod{name: p.Name, uid: string(p.UID), ip: p.Status.PodIP, restarts: restarts})
	}
	return pods
}

// everyPodServes reports whether every pod answers want on / at its own address.
func everyPodServes(pods []nginxPod, want string) bool {
	for _, p := range pods {
		if body, err := httpGet(net.JoinHostPort(p.ip, "8080")); err != nil || body != want {
			return false
		}
	}
	return true
}

// contentReloadsInPlace: with contentUpdate Reload (the default image's default) and
// spec.canary off (reloadVersusRollout stages), new content reaches every running pod within seconds, with no new pod, no failed request
// and a download longer than a pod's termination grace kept to its end; a configuration
// nginx rejects never serves (the pods keep the previous one) and status quotes nginx;
// fixed, it loads.
func contentReloadsInPlace(t *testing.T) {
	const name, content = "reload-site", "reload-content"
	t.Cleanup(func() {
		kubectl(t, "", "delete", "ngx", name, "--ignore-not-found")
		kubectl(t, "", "delete", "configmap", content, "--ignore-not-found")
	})
	manifest := func(extra string) string {
		return `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: ` + name + `, namespace: default}
spec:
  replicas: 2
  healthcheckPath: /healthz
  canary: {enabled: false}
  config:
    inline: |
` + indent(reloadConf(extra), "      ") + `
  files: [{configMapName: ` + content + `, mountPath: /usr/share/nginx/html}]
`
	}
	mustKubectl(t, siteContent(content, "v1"), "apply", "--server-side", "-f", "-")
	mustKubectl(t, manifest(""), "apply", "-f", "-")
	// Unset: the controller reloads, for the default image's user is known.
	if got := get(t, "get", "ngx", name, "-o", "jsonpath={.spec.contentUpdate}"); got != "" {
		t.Fatalf("spec.contentUpdate = %q, want it left unset", got)
	}
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=180s", "ngx/"+name)
	if got := get(t, "get", "deployment", name, "-o", "jsonpath={.spec.template.spec.shareProcessNamespace}"); got != "true" {
		t.Fatalf("the pods do not share their process namespace (%q): not in Reload mode", got)
	}
	pods := nginxPods(t, name)
	waitFor(t, 3*time.Minute, "content v1 from every pod", func() bool { return everyPodServes(pods, "content v1\n") })
	generation := get(t, "get", "deployment", name, "-o", "jsonpath={.metadata.generation}")
	clusterIP := get(t, "get", "service", name, "-o", "jsonpath={.spec.clusterIP}")
	serviceAnswers(t, clusterIP, "content v1\n")

	slow := startDownload(clusterIP+":80", "/slow.txt")
	loop := startClientLoop(clusterIP + ":80")
	changed := time.Now()
	mustKubectl(t, siteContent(content, "v2"), "apply", "--server-side", "-f", "-")
	waitFor(t, 2*time.Minute, "content v2 from every pod", func() bool { return everyPodServes(pods, "content v2\n") })
	served := time.Since(changed)
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=3m", "ngx/"+name)
	t.Logf("content v2 served by both pods %s after the write (Reload)", served.Round(10*time.Millisecond))

	// A configuration nginx rejects (an unknown directive passes the syntax check at
	// admission): it never serves, status says what nginx said.
	mustKubectl(t, manifest("unknown_directive_xyz on;"), "apply", "-f", "-")
	var stalled string
	waitFor(t, 2*time.Minute, "Stalled with nginx's message", func() bool {
		stalled = get(t, "get", "ngx", name, "-o", `jsonpath={.status.conditions[?(@.type=="Stalled")].status} {.status.conditions[?(@.type=="Stalled")].reason}: {.status.conditions[?(@.type=="Stalled")].message}`)
		return strings.HasPrefix(stalled, "True ConfigurationRejected:") && strings.Count(stalled, `unknown directive "unknown_directive_xyz"`) == len(pods)
	})
	t.Logf("rejected: %s", stalled)
	if !everyPodServes(pods, "content v2\n") {
		t.Error("after the rejected configuration, a pod does not serve content v2")
	}
	for _, p := range pods {
		metrics, err := httpGet(net.JoinHostPort(p.ip, "9113") + "/metrics")
		if err != nil || !strings.Contains(metrics, "nginx_config_last_reload_successful 0") || !strings.Contains(metrics, `nginx_config_reloads_total{result="failure"} 1`) {
			t.Errorf("pod %s's exporter after the rejection (%v):\n%s", p.name, err, grepLines(metrics, "nginx_config_"))
		}
	}

	// Fixed: it loads, and status recovers.
	mustKubectl(t, manifest(`location = /version { return 200 "v3\n"; }`), "apply", "-f", "-")
	waitFor(t, 2*time.Minute, "/version from every pod", func() bool {
		for _, p := range pods {
			if body, err := httpGet(net.JoinHostPort(p.ip, "8080") + "/version"); err != nil || body != "v3\n" {
				return false
			}
		}
		return true
	})
	mustKubectl(t, "", "wait", "--for=condition=Stalled=False", "--timeout=3m", "ngx/"+name)

	loop.finish(t, 100)
	ok, failed, seen, failures := loop.report()
	d := <-slow
	t.Logf("client loop: %d requests served (%v), %d failed; the 40 s download across three reloads: %d bytes, %v", ok, seen, failed, d.bytes, d.err)
	if failed != 0 {
		t.Errorf("%d requests failed: %q", failed, failures)
	}
	if !d.kept() {
		t.Errorf("the download across the reloads got %d of %d bytes: %v", d.bytes, slowSize, d.err)
	}
	if after := nginxPods(t, name); fmt.Sprint(after) != fmt.Sprint(pods) {
		t.Errorf("the pods changed: %v, then %v", pods, after)
	}
	if got := get(t, "get", "deployment", name, "-o", "jsonpath={.metadata.generation}"); got != generation {
		t.Errorf("the Deployment changed (generation %s, then %s)", generation, got)
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// contentUpdateFigures is one row of the reload-versus-rollout table.
type contentUpdateFigures struct {
	mode             string
	replicas         int
	toServe          time.Duration // from the write to every pod serving the new content
	lastOld          time.Duration // from the write to the last old answer through the Service
	oldGone          time.Duration // from the write to the last replaced pod gone
	requests, failed int64
	kept, downloads  int // long-lived downloads (40 s) that got every byte
	newPods          int
}

// measureContentUpdate applies version (a one-line change of nginx.conf: what / answers)
// under a client loop and long-lived downloads through the NginxOperator's Service, and
// measures until every pod serves it: the same pods after a reload, only new pods after a
// rollout. (Files of spec.files would not do: nginx serves them from disk, and the kubelet
// refreshes their volume by itself, so old pods of a rollout may serve new files too.)
func measureContentUpdate(t *testing.T, name, mode, previous, version string, replicas int, apply func(version string)) contentUpdateFigures {
	t.Helper()
	before := nginxPods(t, name)
	clusterIP := get(t, "get", "service", name, "-o", "jsonpath={.spec.clusterIP}")
	serviceAnswers(t, clusterIP, "")
	var slow []<-chan download
	for range 2 {
		slow = append(slow, startDownload(clusterIP+":80", "/slow.txt"))
	}
	loop := startClientLoop(clusterIP + ":80")
	uids := map[string]bool{}
	for _, p := range before {
		uids[p.uid] = true
	}
	// replaced counts the pods of before that a rollout must replace and are still there
	// (terminating ones too when all is true).
	replaced := func(pods []corev1.Pod, all bool) int {
		n := 0
		for _, p := range pods {
			if uids[string(p.UID)] && (all || p.DeletionTimestamp == nil) {
				n++
			}
		}
		return n
	}
	list := func() []corev1.Pod {
		l, err := kubeClient(t).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + name})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	changed := time.Now()
	apply(version)
	want := "content " + version + "\n"
	// When each pod first served it, and what the others answered meanwhile.
	served, answered := map[string]time.Duration{}, map[string]string{}
	waitFor(t, 5*time.Minute, fmt.Sprintf("content %s from all %d pods", version, replicas), func() bool {
		pods := nginxPods(t, name)
		for _, p := range pods {
			if _, done := served[p.name]; done {
				continue
			}
			body, err := httpGet(net.JoinHostPort(p.ip, "8080"))
			if err == nil && body == want {
				served[p.name] = time.Since(changed)
			} else {
				answered[p.name] = fmt.Sprintf("%q %v at %s", body, err, time.Since(changed).Round(10*time.Millisecond))
			}
		}
		all := len(pods) == replicas
		for _, p := range pods {
			_, done := served[p.name]
			all = all && done
		}
		return all && (mode != "Rollout" || replaced(list(), false) == 0)
	})
	f := contentUpdateFigures{mode: mode, replicas: replicas, toServe: time.Since(changed), downloads: len(slow)}
	slowest, last := "", time.Duration(0)
	for pod, d := range served {
		if d > last {
			slowest, last = pod, d
		}
	}
	t.Logf("%s of %d pods: the last pod (%s) served %s at %s; before, it answered %s", mode, replicas, slowest, version, last.Round(10*time.Millisecond), answered[slowest])
	// The replaced pods finish their requests, the long-lived ones up to their grace period.
	if mode == "Rollout" {
		waitFor(t, 3*time.Minute, "the replaced pods gone", func() bool { return replaced(list(), true) == 0 })
	}
	if mode == "Rollout" {
		f.oldGone = time.Since(changed)
	}
	loop.finish(t, 100)
	if last := loop.lastSeen("content " + previous); last.After(changed) {
		f.lastOld = last.Sub(changed)
	}
	ok, failed, _, failures := loop.report()
	f.requests, f.failed = ok+failed, failed
	if failed != 0 {
		t.Errorf("%s of %d pods: %d requests failed: %q", mode, replicas, failed, failures)
	}
	for _, c := range slow {
		if d := <-c; d.kept() {
			f.kept++
		}
	}
	for _, p := range nginxPods(t, name) {
		if !uids[p.uid] {
			f.newPods++
		}
	}
	return f
}

// measureAtReplicas measures Reload, Staged (Reload with spec.canary's defaults) and
// Rollout on one NginxOperator of replicas pods: a good configuration, and one that
// answers 500 (badWriteFigures).
func measureAtReplicas(t *testing.T, replicas int) ([]contentUpdateFigures, []badWriteFigures, string) {
	name := fmt.Sprintf("content-%d", replicas)
	content := name + "-html"
	t.Cleanup(func() {
		kubectl(t, "", "delete", "ngx", name, "--ignore-not-found")
		kubectl(t, "", "delete", "configmap", content, "--ignore-not-found")
	})
	// mode is Reload (spec.canary off), Staged (Reload with spec.canary's defaults) or
	// Rollout; version is what / answers, or badConfig. The access log stays on: the
	// guard counts it.
	manifest := func(mode, version string) string {
		contentUpdate, canary := mode, "{enabled: false}"
		if mode == "Staged" {
			contentUpdate, canary = "Reload", "{}"
		}
		extra := `location = / { return 200 "content ` + version + `\n"; }`
		if version == badConfig {
			extra = badConfig
		}
		return fmt.Sprintf(`apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: %s, namespace: default}
spec:
  replicas: %d
  contentUpdate: %s
  canary: %s
  healthcheckPath: /healthz
  config:
    inline: |
%s
  files: [{configMapName: %s, mountPath: /usr/share/nginx/html}]
`, name, replicas, contentUpdate, canary, indent(strings.Replace(reloadConf(extra), "access_log off;", "", 1), "      "), content)
	}
	apply := func(mode string) func(string) {
		return func(v string) { mustKubectl(t, manifest(mode, v), "apply", "-f", "-") }
	}
	// switchTo moves the pods to mode, which rolls them once.
	switchTo := func(mode, version string) {
		apply(mode)(version)
		mustKubectl(t, "", "rollout", "status", "deployment/"+name, "--timeout=5m")
		mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=5m", "ngx/"+name)
	}
	bad := func(mode, previous string, observe time.Duration) badWriteFigures {
		return measureBadWrite(t, name, mode, previous, replicas, func() { apply(mode)(badConfig) }, func() { apply(mode)(previous) }, observe)
	}
	mustKubectl(t, siteContent(content, "v1"), "apply", "--server-side", "-f", "-")
	apply("Reload")("v1")
	start := time.Now()
	mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=5m", "ngx/"+name)
	t.Logf("%d pods Ready in %s", replicas, time.Since(start).Round(100*time.Millisecond))
	reload := measureContentUpdate(t, name, "Reload", "v1", "v2", replicas, apply("Reload"))
	if reload.newPods != 0 || reload.kept != reload.downloads {
		t.Errorf("Reload of %d pods: %d new pods, %d of %d downloads kept", replicas, reload.newPods, reload.kept, reload.downloads)
	}
	badRows := []badWriteFigures{bad("Reload", "v2", 20*time.Second)}

	// Staged: a good configuration is promoted to every pod; one answering 500 is taken
	// back from the canary pods.
	switchTo("Staged", "v2")
	staged := measureContentUpdate(t, name, "Staged", "v2", "v3", replicas, apply("Staged"))
	if staged.newPods != 0 || staged.kept != staged.downloads {
		t.Errorf("Staged of %d pods: %d new pods, %d of %d downloads kept", replicas, staged.newPods, staged.kept, staged.downloads)
	}
	badRows = append(badRows, bad("Staged", "v3", 0))
	leader := ""
	if replicas == 4 {
		leader = leaderDeletedMidStage(t, name, "v4", replicas, func() { apply("Staged")("v4") })
		t.Log(leader)
	}

	// The same pods switch to Rollout (this rolls them once), then the content changes.
	switchTo("Rollout", "v4")
	rollout := measureContentUpdate(t, name, "Rollout", "v4", "v5", replicas, apply("Rollout"))
	if rollout.newPods != replicas {
		t.Errorf("Rollout of %d pods replaced %d", replicas, rollout.newPods)
	}
	badRows = append(badRows, bad("Rollout", "v5", 30*time.Second))
	kubectl(t, "", "delete", "ngx", name, "--wait=false")
	return []contentUpdateFigures{reload, staged, rollout}, badRows, leader
}

// reloadVersusRollout measures a content change at 4 and 20 replicas, reloaded in place,
// staged and rolled out, and a configuration answering 500 written the same three ways,
// and prints the tables the defaults were chosen from (docs/api.md). It asserts what must
// hold (no failed request for a good change; Reload and Staged replace no pod and keep
// every long-lived download; the guard takes the bad one back, and nothing fails once
// the pods serve the previous one), never a duration.
func reloadVersusRollout(t *testing.T) {
	// Both sizes at once, each on its own NginxOperator: the measurements wait mostly (the
	// downloads, the grace periods), and the 2-core node has room for both.
	rows := map[int][]contentUpdateFigures{}
	badRows := map[int][]badWriteFigures{}
	var wg sync.WaitGroup
	var lock sync.Mutex
	for _, replicas := range []int{4, 20} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(fmt.Sprintf("%d replicas", replicas), func(t *testing.T) {
				figures, bad, _ := measureAtReplicas(t, replicas)
				lock.Lock()
				defer lock.Unlock()
				rows[replicas], badRows[replicas] = figures, bad
			})
		}()
	}
	wg.Wait()
	t.Logf("a configuration answering 500 to everything, written under load (50 requests/s through the Service):\n%s", badWriteTable(append(badRows[4], badRows[20]...)))
	var table strings.Builder
	fmt.Fprintf(&table, "| replicas | contentUpdate | write to every pod serving it | last old answer | replaced pods gone | requests | failed | 40 s downloads kept | new pods |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range append(rows[4], rows[20]...) {
		gone := "none replaced"
		if r.newPods > 0 {
			gone = r.oldGone.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(&table, "| %d | %s | %s | %s | %s | %d | %d | %d of %d | %d |\n", r.replicas, r.mode, r.toServe.Round(10*time.Millisecond),
			r.lastOld.Round(10*time.Millisecond), gone, r.requests, r.failed, r.kept, r.downloads, r.newPods)
	}
	t.Logf("a content change, reloaded in place (at once, and staged with spec.canary's defaults) and rolled out:\n%s", table.String())
	m := framework.Measure(t, "content-update")
	for _, r := range append(rows[4], rows[20]...) {
		row := fmt.Sprintf("%s-%d-replicas", strings.ToLower(r.mode), r.replicas)
		of := fmt.Sprintf("%s at %d replicas", r.mode, r.replicas)
		m.Duration(row+"-to-every-pod", r.toServe, of+": from the write to every pod serving the new content")
		m.Duration(row+"-last-old-answer", r.lastOld, of+": from the write to the last old answer through the Service")
		if r.newPods > 0 {
			m.Duration(row+"-replaced-pods-gone", r.oldGone, of+": from the write to the last replaced pod gone")
		}
		m.Count(row+"-requests", int(r.requests), "requests", of+": requests of the client loop (50 a second) through the Service")
		m.Count(row+"-failed", int(r.failed), "requests", of+": of those, failed")
		m.Count(row+"-downloads-kept", r.kept, "downloads", fmt.Sprintf("%s: long downloads (40 s) in flight that got every byte, of %d", of, r.downloads))
		m.Count(row+"-new-pods", r.newPods, "pods", of+": pods replaced")
	}
	bad := framework.Measure(t, "configuration-answering-500")
	for _, r := range append(badRows[4], badRows[20]...) {
		row := fmt.Sprintf("%s-%d-replicas", strings.ToLower(r.mode), r.replicas)
		of := fmt.Sprintf("%s at %d replicas, a configuration answering 500 written under load", r.mode, r.replicas)
		bad.Count(row+"-requests", r.requests, "requests", of+": requests of the client loop (50 a second) through the Service, until the pods served the previous configuration again")
		bad.Count(row+"-failed", r.failed, "requests", of+": of those, failed")
		bad.Duration(row+"-failing", r.lastOne-r.firstFailure, of+": from the first failed request to the last")
	}
}
