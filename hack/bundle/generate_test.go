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
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/example/nginx-operator/pkg/version"
)

func repoOptions() options {
	return options{
		baseDir:    "../../artifacts/deploy",
		samplesDir: "../../artifacts/samples",
		toolsGoMod: "../tools/go.mod",
		version:    version.Get().GitVersion,
	}
}

// TestCommittedBundleIsCurrent fails when bundle/ differs from what 'make bundle' makes
// from today's artifacts (make verify checks the same).
func TestCommittedBundleIsCurrent(t *testing.T) {
	files, _, err := generate(repoOptions())
	if err != nil {
		t.Fatal(err)
	}
	var committed []string
	err = filepath.WalkDir(committedBundle, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(committedBundle, path)
			committed = append(committed, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var generated []string
	for name := range files {
		generated = append(generated, name)
	}
	sort.Strings(generated)
	if diff := cmp.Diff(generated, committed); diff != "" {
		t.Fatalf("bundle/ files differ from the generated ones (-generated +committed); run make bundle:\n%s", diff)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(committedBundle, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("bundle/%s is stale; run make bundle:\n%s", name, cmp.Diff(string(want), string(got)))
		}
	}
}

// TestGenerateIsDeterministic: two runs give the same bytes (map order, sorting).
func TestGenerateIsDeterministic(t *testing.T) {
	first, _, err := generate(repoOptions())
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := generate(repoOptions())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
	if csv := string(first["manifests/nginx-operator.clusterserviceversion.yaml"]); strings.Contains(csv, "kind: APIService") || strings.Contains(csv, "nginx-operator-apiserver-tls") {
		t.Errorf("the CSV carries the base's APIService or serving certificate, which OLM makes itself")
	}
}
