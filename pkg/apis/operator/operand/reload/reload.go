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
)

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
