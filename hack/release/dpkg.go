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

package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// debPackage is a Debian package dpkg records as installed in an image.
type debPackage struct {
	name, version, architecture, source string
}

// parseDpkgStatus reads a dpkg status file (stanzas of "Field: value" lines separated by
// blank lines) and returns the packages it records as installed. Distroless-style
// status.d files have no Status field; their packages are installed by definition.
func parseDpkgStatus(r io.Reader) ([]debPackage, error) {
	var out []debPackage
	fields := map[string]string{}
	flush := func() error {
		defer clear(fields)
		if len(fields) == 0 {
			return nil
		}
		if status := fields["Status"]; status != "" && !strings.HasSuffix(status, " installed") {
			return nil
		}
		p := debPackage{name: fields["Package"], version: fields["Version"], architecture: fields["Architecture"], source: fields["Source"]}
		if p.name == "" || p.version == "" {
			return fmt.Errorf("a stanza without Package or Version: %v", fields)
		}
		// "Source: name (version)" when the source version differs; only the name is kept.
		p.source, _, _ = strings.Cut(p.source, " ")
		out = append(out, p)
		return nil
	}
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	last := ""
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.TrimSpace(line) == "":
			if err := flush(); err != nil {
				return nil, err
			}
		case line[0] == ' ' || line[0] == '\t': // a continuation of the last field
			if last == "" {
				return nil, fmt.Errorf("a continuation line before any field: %q", line)
			}
		default:
			key, value, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("not a field: %q", line)
			}
			last = key
			fields[key] = strings.TrimSpace(value)
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	return out, flush()
}
