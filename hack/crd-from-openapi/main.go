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

// Command crd-from-openapi prints the v1alpha2 NginxOperator API as an
// apiextensions.k8s.io/v1 CustomResourceDefinition in another group
// (crd.operator.example.com), generated from our OpenAPI definitions and Go defaulting,
// so that make bench can compare our aggregated API with the same API served as a CRD by
// kube-apiserver. hack/update-codegen.sh writes its output to
// artifacts/bench/crd-nginxoperators.yaml.
package main

import (
	"fmt"
	"os"
)

func main() {
	crd, err := buildCRD()
	if err == nil {
		var out []byte
		if out, err = renderYAML(crd); err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "crd-from-openapi: %v\n", err)
		os.Exit(1)
	}
}
