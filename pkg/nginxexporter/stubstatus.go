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

// Package nginxexporter exports nginx's stub_status page as Prometheus metrics. It runs
// as a sidecar of every nginx pod (cmd/nginx-exporter) and reads the page over the pod's
// loopback on each scrape: there is no polling loop and no state between scrapes.
package nginxexporter

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// StubStatus is what nginx's stub_status module reports
// (https://nginx.org/en/docs/http/ngx_http_stub_status_module.html).
type StubStatus struct {
	// Active is the number of open client connections, including Waiting ones.
	Active uint64
	// Accepted, Handled and Requests are counters since nginx's master started; they
	// survive a reload and restart from zero with nginx.
	Accepted uint64
	Handled  uint64
	Requests uint64
	// Reading, Writing and Waiting split Active by state.
	Reading uint64
	Writing uint64
	Waiting uint64
}

// maxStubStatusBytes bounds what is read from the page: it is about 100 bytes.
const maxStubStatusBytes = 4096

// ParseStubStatus parses the page, which reads
//
//	Active connections: 291
//	server accepts handled requests
//	 16630948 16630948 31070465
//	Reading: 6 Writing: 179 Waiting: 106
//
// Anything else is an error that names the line; it never panics.
func ParseStubStatus(r io.Reader) (StubStatus, error) {
	var s StubStatus
	data, err := io.ReadAll(io.LimitReader(r, maxStubStatusBytes+1))
	if err != nil {
		return s, err
	}
	if len(data) > maxStubStatusBytes {
		return s, fmt.Errorf("stub_status: longer than %d bytes", maxStubStatusBytes)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) != 4 {
		return s, fmt.Errorf("stub_status: want 4 lines, got %d", len(lines))
	}
	if err := fields(lines[0], 1, []string{"Active", "connections:"}, &s.Active); err != nil {
		return s, err
	}
	if lines[1] != "server accepts handled requests" {
		return s, fmt.Errorf("stub_status line 2: want %q, got %q", "server accepts handled requests", lines[1])
	}
	if err := numbers(lines[2], 3, &s.Accepted, &s.Handled, &s.Requests); err != nil {
		return s, err
	}
	if err := fields(lines[3], 4, []string{"Reading:", "", "Writing:", "", "Waiting:"}, &s.Reading, &s.Writing, &s.Waiting); err != nil {
		return s, err
	}
	return s, nil
}

// fields matches a line of labels (non-empty entries of labels) and numbers (the empty
// entries, and whatever follows the labels).
func fields(line string, lineNo int, labels []string, out ...*uint64) error {
	words := strings.Fields(line)
	if len(words) != len(labels)+1 {
		return fmt.Errorf("stub_status line %d: unexpected %q", lineNo, line)
	}
	n := 0
	for i, w := range words {
		if i < len(labels) && labels[i] != "" {
			if w != labels[i] {
				return fmt.Errorf("stub_status line %d: want %q, got %q", lineNo, labels[i], w)
			}
			continue
		}
		v, err := strconv.ParseUint(w, 10, 64)
		if err != nil {
			return fmt.Errorf("stub_status line %d: %q is not a count", lineNo, w)
		}
		*out[n] = v
		n++
	}
	return nil
}

func numbers(line string, lineNo int, out ...*uint64) error {
	words := strings.Fields(line)
	if len(words) != len(out) {
		return fmt.Errorf("stub_status line %d: want %d counts, got %q", lineNo, len(out), line)
	}
	for i, w := range words {
		v, err := strconv.ParseUint(w, 10, 64)
		if err != nil {
			return fmt.Errorf("stub_status line %d: %q is not a count", lineNo, w)
		}
		*out[i] = v
	}
	return nil
}
