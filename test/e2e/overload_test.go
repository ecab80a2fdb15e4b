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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

const (
	overloadUser  = "e2e-overload-user"
	overloadLevel = "e2e-overload"
)

// overloadObjects: a priority level of a few seats that rejects rather than queues, a
// FlowSchema that puts the test user (and no one else) into it, and RBAC to list and
// watch NginxOperators. borrowingLimitPercent 0 keeps the level from borrowing seats.
var overloadObjects = fmt.Sprintf(`apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: %[1]s}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse: {type: Reject}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: %[1]s}
spec:
  matchingPrecedence: 500
  priorityLevelConfiguration: {name: %[1]s}
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: User, user: {name: %[2]s}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"], clusterScope: true}]
    nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s}
rules:
- {apiGroups: [operator.example.com], resources: [nginxoperators], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %[2]s}]
`, overloadLevel, overloadUser)

// TestOverloadIsShedWithPriorityAndFairness bursts LIST and WATCH requests of one user
// whose FlowSchema gives it a few seats: our apiserver, in delegated mode, classifies with
// the FlowSchemas and PriorityLevelConfigurations it reads from kube-apiserver and answers
// 429 with Retry-After, no 5xx, while its /readyz and other users stay served.
func TestOverloadIsShedWithPriorityAndFairness(t *testing.T) {
	t.Cleanup(func() { kubectl(t, overloadObjects, "delete", "--ignore-not-found", "-f", "-") })
	mustKubectl(t, overloadObjects, "apply", "-f", "-")
	flowSchemaUID := get(t, "get", "flowschema", overloadLevel, "-o", "jsonpath={.metadata.uid}")
	user := clientWithCert(t, overloadUser, 200)

	// Our apiserver names the FlowSchema it chose in a response header.
	listURL := operatorURL("/apis/operator.example.com/v1alpha2/nginxoperators")
	took := framework.WaitFor(t, 2*time.Minute, "our apiserver to classify the test user into the new FlowSchema", func() bool {
		resp, err := user.Get(listURL)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") == flowSchemaUID
	})
	t.Logf("our apiserver applied the new FlowSchema %s after it was created", took.Round(100*time.Millisecond))
	seats := prometheusSample(t, scrape(t, adminHTTPClient(t), operatorURL("/metrics")), "apiserver_flowcontrol_nominal_limit_seats", `priority_level="`+overloadLevel+`"`)
	t.Logf("our apiserver gives priority level %s %v nominal seats", overloadLevel, seats)

	for _, target := range []struct{ name, url string }{
		{"our apiserver directly", operatorURL("")},
		{"through kube-apiserver's aggregator", kubeURL("")},
	} {
		t.Run(target.name, func(t *testing.T) {
			burst(t, user, target.url, target.name == "our apiserver directly")
		})
	}
}

// burst runs concurrent LISTs and WATCHes of NginxOperators as the overload user at base,
// with admin and another (non-exempt) user and our /readyz checked throughout, and prints
// the tally. Each server's apiserver_flowcontrol_rejected_requests_total tells which of
// them turned requests away.
func burst(t *testing.T, user *http.Client, base string, mustReject bool) {
	const (
		listers, listsEach = 100, 20
		watchers           = 50
	)
	rejectedBefore := rejectedAt(t)
	rssBefore := operatorRSS(t)
	var (
		mu         sync.Mutex
		codes      = map[int]int{}
		retryAfter int
		failures   []string
		requests   atomic.Int64
	)
	record := func(resp *http.Response, err error) {
		requests.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if len(failures) < 5 {
				failures = append(failures, err.Error())
			}
			codes[0]++
			return
		}
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "" {
			retryAfter++
		}
	}
	listURL := base + "/apis/operator.example.com/v1alpha2/nginxoperators"
	var wg sync.WaitGroup
	for range listers {
		wg.Go(func() {
			for range listsEach {
				resp, err := user.Get(listURL)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				record(resp, err)
			}
		})
	}
	for range watchers {
		wg.Go(func() {
			// A watch holds its seat while it starts; the stream then ends by itself.
			resp, err := user.Get(listURL + "?watch=1&timeoutSeconds=3")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			record(resp, err)
		})
	}

	// Meanwhile: our /readyz, an exempt user (admin, system:masters) and a non-exempt one
	// (the controller's identity) must be served.
	done := make(chan struct{})
	others := map[string]map[int]int{}
	lastFailure := map[string]string{} // the body of a probe's last answer other than 200
	// etcdBlips counts /readyz answers whose only failed checks are etcd's, each alone
	// between answers of 200: etcd's checks give up after 2 s (--etcd-healthcheck-timeout)
	// when the burst starves it of CPU for a moment on a loaded 2-core machine, and the
	// kubelet takes a pod out only after 3 failed probes in a row. Two in a row still fail.
	etcdBlips, etcdInARow, worstInARow := 0, 0, 0
	var othersWG sync.WaitGroup
	for _, probe := range []struct {
		name   string
		client *http.Client
		url    string
	}{
		// verbose: a failed readiness check is named in the body.
		{"our /readyz", adminHTTPClient(t), operatorURL("/readyz?verbose")},
		{"admin LIST", adminHTTPClient(t), listURL},
		{"controller LIST", httpClient(t, "nginx-operator-controller-client"), listURL},
	} {
		tally := map[int]int{}
		others[probe.name] = tally
		othersWG.Go(func() {
			// One request every 50 ms: a paced probe, not a load.
			pace := time.NewTicker(50 * time.Millisecond)
			defer pace.Stop()
			for {
				select {
				case <-done:
					return
				case <-pace.C:
				}
				code, body := 0, ""
				if resp, err := probe.client.Get(probe.url); err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					code, body = resp.StatusCode, string(b)
				}
				mu.Lock()
				switch {
				case probe.name == "our /readyz" && code == http.StatusInternalServerError && onlyEtcdChecksFailed(body):
					etcdBlips++
					etcdInARow++
					worstInARow = max(worstInARow, etcdInARow)
					lastFailure[probe.name+" (etcd)"] = body
				default:
					if probe.name == "our /readyz" {
						etcdInARow = 0
					}
					tally[code]++
					if code != http.StatusOK {
						lastFailure[probe.name] = body
					}
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	wg.Wait()
	elapsed := time.Since(start)
	close(done)
	othersWG.Wait()
	rejected := rejectedAt(t)

	serverErrors := 0
	for code, n := range codes {
		if code >= 500 {
			serverErrors += n
		}
	}
	t.Logf("burst at %s: %d requests (%d LIST, %d WATCH) in %s: %d answered 200, %d answered 429 (%d with Retry-After), %d 5xx, other %s; client errors %q",
		base, requests.Load(), listers*listsEach, watchers, elapsed.Round(100*time.Millisecond), codes[http.StatusOK], codes[http.StatusTooManyRequests],
		retryAfter, serverErrors, otherCodes(codes), failures)
	rssAfter := operatorRSS(t)
	m := framework.Measure(t, "overload-priority-and-fairness")
	m.Count("answered-200", codes[http.StatusOK], "requests", "requests of the burst answered 200")
	m.Count("answered-429", codes[http.StatusTooManyRequests], "requests", "requests of the burst answered 429")
	m.Value("rss-before", float64(rssBefore)/(1<<20), "MiB", "our apiserver's RSS before the burst")
	m.Value("rss-after", float64(rssAfter)/(1<<20), "MiB", "our apiserver's RSS after the burst")
	t.Logf("rejected by APF for %s during the burst: our apiserver %v, kube-apiserver %v; our apiserver's RSS %d MiB before, %d MiB after",
		overloadLevel, rejected[0]-rejectedBefore[0], rejected[1]-rejectedBefore[1], rssBefore>>20, rssAfter>>20)
	if etcdBlips > 0 {
		t.Logf("our /readyz answered 500 with only its etcd checks failed %d times, at most %d in a row; the last such answer:\n%s",
			etcdBlips, worstInARow, lastFailure["our /readyz (etcd)"])
	}
	if worstInARow > 1 {
		t.Errorf("our /readyz failed its etcd checks %d times in a row during the burst", worstInARow)
	}
	for name, tally := range others {
		t.Logf("during the burst, %s: %s", name, formatCodes(tally))
		for code, n := range tally {
			if code != http.StatusOK {
				t.Errorf("%s answered %d %d times during the burst; the last such answer:\n%s", name, code, n, lastFailure[name])
			}
		}
	}
	if serverErrors > 0 || codes[0] > 0 {
		t.Errorf("%d 5xx and %d failed requests under overload: %s %q", serverErrors, codes[0], formatCodes(codes), failures)
	}
	if codes[http.StatusTooManyRequests] != retryAfter {
		t.Errorf("%d of %d 429 answers lack Retry-After", codes[http.StatusTooManyRequests]-retryAfter, codes[http.StatusTooManyRequests])
	}
	if codes[http.StatusOK] == 0 {
		t.Error("the overload user was not served at all")
	}
	if mustReject && (codes[http.StatusTooManyRequests] == 0 || rejected[0] == rejectedBefore[0]) {
		t.Errorf("our apiserver rejected nothing: %d 429 answers, its rejected-requests counter moved by %v", codes[http.StatusTooManyRequests], rejected[0]-rejectedBefore[0])
	}
}

// rejectedAt returns apiserver_flowcontrol_rejected_requests_total of the test's
// priority level at our apiserver and at kube-apiserver.
func rejectedAt(t *testing.T) [2]float64 {
	t.Helper()
	admin := adminHTTPClient(t)
	var out [2]float64
	for i, url := range []string{operatorURL("/metrics"), kubeURL("/metrics")} {
		out[i] = prometheusSample(t, scrape(t, admin, url), "apiserver_flowcontrol_rejected_requests_total", `priority_level="`+overloadLevel+`"`)
	}
	return out
}

func scrape(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	status, body, _ := do(t, c, http.MethodGet, url, nil, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d", url, status)
	}
	return body
}

// prometheusSample sums the samples of a metric whose labels include every matcher
// (label="value").
func prometheusSample(t *testing.T, text, metric string, matchers ...string) float64 {
	t.Helper()
	return metricSum(t, text, metric+"{"+strings.Join(matchers, ",")+"}")
}

// operatorRSS is the resident memory of our apiserver process in bytes.
func operatorRSS(t *testing.T) int64 {
	t.Helper()
	pid, err := os.ReadFile(filepath.Join(localDir, "pids", "nginx-operator-apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(pid)), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func otherCodes(codes map[int]int) string {
	rest := map[int]int{}
	for code, n := range codes {
		if code != http.StatusOK && code != http.StatusTooManyRequests && code < 500 {
			rest[code] = n
		}
	}
	return formatCodes(rest)
}

// formatCodes prints a tally as "200:12 429:3" (0 stands for a failed request).
func formatCodes(codes map[int]int) string {
	keys := make([]int, 0, len(codes))
	for code := range codes {
		keys = append(keys, code)
	}
	sort.Ints(keys)
	parts := make([]string, 0, len(keys))
	for _, code := range keys {
		parts = append(parts, fmt.Sprintf("%d:%d", code, codes[code]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// clientWithCert returns an HTTP client that authenticates as user with a fresh client
// certificate from the cluster CA, which kube-apiserver and (delegated) our apiserver
// trust. HTTP/1.1 with up to conns connections, so a burst is not serialised onto the
// streams of one HTTP/2 connection.
func clientWithCert(t *testing.T, user string, conns int) *http.Client {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(pkiFile("ca.crt"), pkiFile("ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := framework.IssueCertificate(&ca, user, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	base := httpClient(t, "")
	transport := base.Transport.(*http.Transport)
	transport.TLSClientConfig.Certificates = []tls.Certificate{leaf}
	transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	transport.MaxIdleConnsPerHost = conns
	base.Timeout = time.Minute
	return base
}

// onlyEtcdChecksFailed reports whether a verbose /readyz answer names etcd's checks, and
// only those, as failed.
func onlyEtcdChecksFailed(body string) bool {
	failed := 0
	for _, line := range strings.Split(body, "\n") {
		check, isFailure := strings.CutPrefix(line, "[-]")
		if !isFailure {
			continue
		}
		failed++
		if name, _, _ := strings.Cut(check, " "); name != "etcd" && name != "etcd-readiness" {
			return false
		}
	}
	return failed > 0
}
