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

// Command bundle generates the OLM (registry+v1) bundle of nginx-operator from the
// kustomize base artifacts/deploy: bundle/manifests with the ClusterServiceVersion (the
// apiserver and controller Deployments, their RBAC as permissions, the API as owned API
// services) and the base's extra objects OLM can install, bundle/metadata/annotations.yaml
// and bundle/bundle.Dockerfile. 'make bundle' runs it from the repository root; so does
// hack/update-codegen.sh, and make verify fails when bundle/ is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/example/nginx-operator/pkg/version"
)

func main() {
	var opts options
	flag.StringVar(&opts.baseDir, "base", "artifacts/deploy", "the kustomize base to render")
	flag.StringVar(&opts.samplesDir, "samples", "artifacts/samples", "sample objects, one per file, for the CSV's alm-examples")
	flag.StringVar(&opts.toolsGoMod, "tools-go-mod", "hack/tools/go.mod", "the go.mod that pins the Kubernetes release the project is tested against (minKubeVersion)")
	out := flag.String("out", "bundle", "the bundle directory to write")
	flag.Parse()

	opts.version = version.Get().GitVersion
	files, prerequisites, err := generate(opts)
	if err == nil {
		err = writeBundle(*out, files)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bundle: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "bundle: wrote %s; apply before installing it (OLM does not install them): %s\n", *out, strings.Join(prerequisites, ", "))
}
