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
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// setValues sets scalar values of a YAML document (a chart's values.yaml) by their dotted
// paths. Only the values' text changes: comments, blank lines and layout stay as they are.
// A path that does not exist is an error: the chart's values changed, and the release
// would silently not pin that image.
func setValues(data []byte, values map[string]string) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	for path, value := range values {
		node, err := lookupValue(data, path)
		if err != nil {
			return nil, err
		}
		// Replace the scalar's token on its line (yaml counts lines and columns from 1).
		line := lines[node.Line-1]
		start := node.Column - 1
		end, err := scalarEnd(line, start)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		lines[node.Line-1] = line[:start] + strconv.Quote(value) + line[end:]
		data = []byte(strings.Join(lines, ""))
	}
	// What the chart will read: every value as set.
	for path, value := range values {
		if node, err := lookupValue(data, path); err != nil || node.Value != value {
			return nil, fmt.Errorf("%s: setting it to %q did not work (%v)", path, value, err)
		}
	}
	return data, nil
}

// lookupValue returns the scalar node at a dotted path of mapping keys.
func lookupValue(data []byte, path string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("not a single YAML document")
	}
	node := doc.Content[0]
	for _, key := range strings.Split(path, ".") {
		if node = mappingValue(node, key); node == nil {
			return nil, fmt.Errorf("the values have no %s", path)
		}
	}
	if node.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("%s is not a scalar", path)
	}
	return node, nil
}

// scalarEnd returns where the single-line scalar starting at line[start] ends: after its
// closing quote, or, for a plain scalar, before a comment or the end of the line.
func scalarEnd(line string, start int) (int, error) {
	switch rest := line[start:]; {
	case strings.HasPrefix(rest, `"`):
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return start + i + 1, nil
			}
		}
	case strings.HasPrefix(rest, "'"):
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return start + i + 1, nil
			}
		}
	case strings.HasPrefix(rest, "|") || strings.HasPrefix(rest, ">"):
	default:
		end := len(strings.TrimRight(rest, "\r\n"))
		if i := strings.Index(rest, " #"); i >= 0 && i < end {
			end = i
		}
		return start + len(strings.TrimRight(rest[:end], " \t")), nil
	}
	return 0, fmt.Errorf("not a single-line scalar: %q", strings.TrimSpace(line))
}

func mappingValue(node *yaml.Node, key string) *yaml.Node {
	if node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i+1]
		}
	}
	return nil
}
