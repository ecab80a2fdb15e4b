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
	"sort"
	"strings"
)

// channel is the one OLM channel this bundle is published in; "candidate" follows OLM's
// channel naming convention for releases that are not yet stable (the API is alpha).
const channel = "candidate"

// bundleAnnotations are the registry+v1 bundle's metadata/annotations.yaml, which also
// become the labels of the bundle image.
func bundleAnnotations() map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         packageName,
		"operators.operatorframework.io.bundle.channels.v1":        channel,
		"operators.operatorframework.io.bundle.channel.default.v1": channel,
	}
}

// bundleDockerfile builds the bundle image: the two directories and the annotations as
// labels, on scratch (build it with bundle/ as the context).
func bundleDockerfile(annotations map[string]string) string {
	var b strings.Builder
	b.WriteString(generatedHeader)
	b.WriteString("# Build: docker build -f bundle/bundle.Dockerfile -t <registry>/nginx-operator-bundle:<version> bundle\n")
	b.WriteString("FROM scratch\n\n")
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "LABEL %s=%s\n", k, annotations[k])
	}
	b.WriteString("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n")
	return b.String()
}
