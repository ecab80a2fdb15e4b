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

// Package reload is the reload-in-place contract between the controller and the exporter
// sidecar (spec.contentUpdate: Reload): the pod annotation, the paths both sides mount,
// how a volume's content is hashed and what the sidecar reports. It imports only the
// standard library, so the nginx-exporter binary, which needs only this, links no
// Kubernetes API types (TestExporterLinksNoKubernetesAPI in cmd/nginx-exporter checks).
package reload

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
)

const (
	// ContentHashesAnnotation on a pod is the content the controller wants it to load:
	// FormatContentHashes of the hash of each mounted volume. The controller writes it on
	// the pod itself (a pod update makes the kubelet refresh the pod's volumes at once),
	// never in the pod template, so a new value replaces no pod.
	ContentHashesAnnotation = "operator.example.com/content-hashes"

	// ConfigDirectory holds spec.config's nginx.conf in Reload mode: a directory mount,
	// which the kubelet refreshes (a file mounted with subPath never is). nginx's
	// ConfigPath is then a fixed file that includes it.
	ConfigDirectory = "/etc/nginx/nginx-operator-config"
	// ErrorLogDirectory is a writable emptyDir shared by nginx and the sidecar: the fixed
	// nginx.conf sends nginx's errors to ErrorLog too, so the sidecar can tell which
	// message a rejected configuration got.
	ErrorLogDirectory = "/var/run/nginx-operator-log"
	// ErrorLog is the file in ErrorLogDirectory that nginx logs its errors to.
	ErrorLog = ErrorLogDirectory + "/error.log"

	// Where the sidecar finds what it compares, in its own container: every content
	// volume in ContentDirectory/<volume name>, and the pod's ContentHashesAnnotation as
	// the file DesiredFile (a downwardAPI item in DesiredDirectory).
	ContentDirectory = "/var/run/nginx-operator/content"
	// DesiredDirectory is where the sidecar mounts the downwardAPI volume of DesiredFile.
	DesiredDirectory = "/var/run/nginx-operator/desired"
	// DesiredFile is the pod's ContentHashesAnnotation, as the kubelet last wrote it.
	DesiredFile = DesiredDirectory + "/content-hashes"

	// StatePath on the sidecar's metrics port answers a State as JSON.
	StatePath = "/reload"

	// A staged reload (spec.canary) needs more of the pod. IncludeVolume names, among
	// the volumes of FormatContentHashes, the file that says which configuration the
	// pod's nginx includes (the stable one, or the candidate on a canary pod): it is
	// hashed like a volume, so a pod switched to the other file reloads although no
	// volume changed.
	IncludeVolume = "nginx-include"
	// AccessLog is the file in ErrorLogDirectory nginx writes the time, status and
	// duration of each request to (TrafficLogFormat), for the sidecar to count.
	AccessLog = ErrorLogDirectory + "/access.log"
	// TrafficPath on the sidecar's metrics port answers the Traffic since the time in
	// its query parameter "since" (RFC 3339).
	TrafficPath = "/reload/traffic"
	// TrafficLogFormat is nginx's log_format of AccessLog: $msec $status $request_time.
	TrafficLogFormat = "$msec $status $request_time"
)

// LatencyBounds are the upper bounds, in seconds, of Traffic's latency buckets; a last
// bucket counts the slower requests.
var LatencyBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Traffic is what nginx answered in a period, from its access log.
type Traffic struct {
	// Requests counts the requests answered, Errors the ones answered with a 5xx status.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// Latency counts the requests by duration: Latency[i] those of at most
	// LatencyBounds[i] seconds (and above the bound before); the last, the slower ones.
	// Empty when there was no request.
	Latency []int64 `json:"latency,omitempty"`
}

// Add adds o's requests to t.
func (t *Traffic) Add(o Traffic) {
	t.Requests += o.Requests
	t.Errors += o.Errors
	if len(o.Latency) > 0 && len(t.Latency) == 0 {
		t.Latency = make([]int64, len(LatencyBounds)+1)
	}
	for i := range min(len(o.Latency), len(t.Latency)) {
		t.Latency[i] += o.Latency[i]
	}
}

// Observe counts one request of status and duration seconds.
func (t *Traffic) Observe(status int, seconds float64) {
	t.Requests++
	if status >= 500 && status <= 599 {
		t.Errors++
	}
	if len(t.Latency) == 0 {
		t.Latency = make([]int64, len(LatencyBounds)+1)
	}
	i := sort.SearchFloat64s(LatencyBounds, seconds)
	t.Latency[i]++
}

// ErrorPercent is the share of 5xx answers in percent; 0 without requests.
func (t Traffic) ErrorPercent() float64 {
	if t.Requests == 0 {
		return 0
	}
	return 100 * float64(t.Errors) / float64(t.Requests)
}

// Quantile is the upper bound, in seconds, of the bucket that holds quantile q of the
// requests' durations (the last bound doubled for the slowest bucket); 0 without requests.
func (t Traffic) Quantile(q float64) float64 {
	var total int64
	for _, n := range t.Latency {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.5)
	var seen int64
	for i, n := range t.Latency {
		seen += n
		if seen >= rank && seen > 0 {
			if i < len(LatencyBounds) {
				return LatencyBounds[i]
			}
			break
		}
	}
	return 2 * LatencyBounds[len(LatencyBounds)-1]
}

// Health is what the health path answered in the pod after nginx loaded Content.
type Health struct {
	Content string `json:"content"`
	// Code is the HTTP status; 0 when nginx did not answer, and Error says why.
	Code  int    `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
}

// Failed reports whether the answer counts against the content: none, or a 5xx.
func (h Health) Failed() bool {
	return h.Code == 0 || h.Code >= 500
}

// State is what the sidecar reports on StatePath. Hashes are in the form of
// FormatContentHashes; "" when there is none.
type State struct {
	// Desired is the pod's ContentHashesAnnotation as the sidecar last read it.
	Desired string `json:"desired"`
	// Mounted is what the volumes hold now.
	Mounted string `json:"mounted"`
	// Loaded is the content nginx runs: what it started with, or the last content it
	// accepted on a reload.
	Loaded string `json:"loaded"`
	// Rejected is the last content nginx refused to load, Message nginx's reason; both
	// are cleared by the next successful reload.
	Rejected string `json:"rejected,omitempty"`
	Message  string `json:"message,omitempty"`
	// Reloads and Failures count the reloads asked for and the ones that failed.
	Reloads  int64 `json:"reloads"`
	Failures int64 `json:"failures"`
	// Health is what the health path answered after the last reload that loaded
	// content, when the sidecar has a health URL.
	Health *Health `json:"health,omitempty"`
}

// ContentHash hashes a volume's files the same way on both sides: the controller from
// the ConfigMap's or Secret's data (keys, or item paths, as file names), the sidecar
// from the files the kubelet wrote. Names are sorted; lengths go before contents, so
// no two different sets of files hash alike.
func ContentHash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		writeFile(h, name, files[name])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func writeFile(w io.Writer, name string, content []byte) {
	// w is a hash, whose writes never fail.
	_, _ = fmt.Fprintf(w, "%d:%s%d:", len(name), name, len(content))
	_, _ = w.Write(content)
}

// FormatContentHashes writes volume=hash pairs sorted by volume, separated by spaces:
// the value of ContentHashesAnnotation.
func FormatContentHashes(hashes map[string]string) string {
	pairs := make([]string, 0, len(hashes))
	for volume, hash := range hashes {
		pairs = append(pairs, volume+"="+hash)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, " ")
}

// ParseContentHashes reads what FormatContentHashes wrote; "" is no volume.
func ParseContentHashes(s string) (map[string]string, error) {
	hashes := map[string]string{}
	for _, pair := range strings.Fields(s) {
		volume, hash, ok := strings.Cut(pair, "=")
		if !ok || volume == "" || hash == "" {
			return nil, fmt.Errorf("%q is not volume=hash", pair)
		}
		if _, dup := hashes[volume]; dup {
			return nil, fmt.Errorf("volume %q appears twice", volume)
		}
		hashes[volume] = hash
	}
	return hashes, nil
}
