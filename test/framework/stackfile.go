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

package framework

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// StackKind is a kind of local stack: kwok's fake nodes (the default) or a real node
// (NODE=real).
type StackKind string

const (
	KwokStack StackKind = "kwok"
	RealStack StackKind = "real"
)

// component is one line of hack/stack.txt.
type component struct {
	name         string
	kinds        []StackKind
	portVars     []string
	portDefaults []string
}

// readStackFile reads hack/stack.txt, the description of the local stack that
// hack/lib-local.sh reads too.
func readStackFile(repoRoot string) ([]component, error) {
	path := filepath.Join(repoRoot, "hack", "stack.txt")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var components []component
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 2 {
			return nil, fmt.Errorf("%s:%d: want a component and the stacks that run it", path, line)
		}
		c := component{name: fields[0]}
		for _, kind := range strings.Split(fields[1], ",") {
			c.kinds = append(c.kinds, StackKind(kind))
		}
		for _, port := range fields[2:] {
			variable, value, found := strings.Cut(port, "=")
			if !found || value == "" {
				return nil, fmt.Errorf("%s:%d: port %q is not VARIABLE=default", path, line, port)
			}
			c.portVars = append(c.portVars, variable)
			c.portDefaults = append(c.portDefaults, value)
		}
		components = append(components, c)
	}
	return components, scanner.Err()
}

// PortVars are the port variables of the components a stack of this kind runs, in start
// order: the stack sets each to a free port.
func PortVars(repoRoot string, kind StackKind) ([]string, error) {
	components, err := readStackFile(repoRoot)
	if err != nil {
		return nil, err
	}
	var vars []string
	for _, c := range components {
		if slices.Contains(c.kinds, kind) {
			vars = append(vars, c.portVars...)
		}
	}
	if len(vars) == 0 {
		return nil, fmt.Errorf("hack/stack.txt lists no ports for a %s stack", kind)
	}
	return vars, nil
}
