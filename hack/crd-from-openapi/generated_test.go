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
	"bytes"
	"os"
	"testing"
)

// committedCRD is where hack/update-codegen.sh writes this program's output.
const committedCRD = "../../artifacts/bench/crd-nginxoperators.yaml"

// TestCommittedCRDIsCurrent fails when the committed manifest is not what this program
// prints now (make verify catches the same; this says it sooner).
func TestCommittedCRDIsCurrent(t *testing.T) {
	crd, err := buildCRD()
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderYAML(crd)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committedCRD)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run make generate", committedCRD)
	}
}
