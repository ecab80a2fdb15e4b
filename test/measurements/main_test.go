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
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/nginx-operator/test/framework"
)

// TestFiguresWrittenByATestReachTheDocument runs what make test and make measurements do:
// a test records figures into FIGURES_DIR, the command merges them into an existing
// report. The group measured again is replaced whole (a figure it no longer measures goes),
// the other groups stay, and the document lists every figure under its group's heading.
func TestFiguresWrittenByATestReachTheDocument(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	t.Setenv(framework.FiguresDirEnv, dir)
	m := framework.Measure(t, "etcd-restore")
	m.Duration("restore", 75_400_000_000, "the restore")
	m.Count("objects", 10, "objects", "objects back")
	m.Value("peak", 29.25, "MiB", "a size")

	hi := 84.0
	old := report{Figures: []framework.FigureRecord{
		{Group: "etcd-restore", Name: "restore", Value: 75, Max: &hi, Unit: "s", What: "before", Suite: "deploy", Test: "old", Measured: "2026-11-20", How: "carried over"},
		{Group: "etcd-restore", Name: "gone", Value: 1, Unit: "s", What: "no longer measured", Suite: "deploy", Test: "old", Measured: "2026-11-20"},
		{Group: "make-test", Name: "total", Value: 1100, Unit: "s", What: "kept", Suite: "hack", Test: "hack/test.sh", Measured: "2026-11-21T10:00:00Z"},
	}}
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "measurements.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, out); err != nil {
		t.Fatal(err)
	}

	data, err = os.ReadFile(filepath.Join(out, "measurements.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got report
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range got.Figures {
		names = append(names, f.Group+"/"+f.Name)
	}
	if want := "make-test/total etcd-restore/restore etcd-restore/objects etcd-restore/peak"; strings.Join(names, " ") != want {
		t.Errorf("figures %v, want %s", names, want)
	}
	md, err := os.ReadFile(filepath.Join(out, "measurements.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n### etcd-restore\n\nMeasured by `TestFiguresWrittenByATestReachTheDocument`.\n",
		"| restore | 75.4 s | the restore |",
		"| objects | 10 objects | objects back |",
		"| peak | 29.2 MiB | a size |",
		"\n### make-test\n",
		"| total | 1100 s | kept | 2026-11-21 10:00 UTC |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("measurements.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "no longer measured") {
		t.Errorf("a figure its group no longer measures stayed:\n%s", md)
	}
}

func TestNumber(t *testing.T) {
	for v, want := range map[float64]string{0.67: "0.67", 32.64: "32.6", 1731: "1731", 7.364: "7.36", 0.1: "0.1", 3.0: "3", 1234.6: "1235", 0.0123: "0.0123"} {
		if got := number(v); got != want {
			t.Errorf("number(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestCommittedDocumentIsCurrent fails when docs/measurements.md is not what
// docs/measurements.json renders to: the document is generated, never edited (`make
// measurements` without new figures renders it again).
func TestCommittedDocumentIsCurrent(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "measurements.json"))
	if err != nil {
		t.Fatal(err)
	}
	var committed report
	if err := json.Unmarshal(data, &committed); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "measurements.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := markdown(merge(committed.Figures, nil)); string(md) != want {
		t.Errorf("docs/measurements.md is not what docs/measurements.json renders to: run make measurements")
	}
	for _, f := range committed.Figures {
		if !framework.ValidFigureGroup(f.Group) || f.Name == "" || f.What == "" || f.Measured == "" || f.Suite == "" || f.Test == "" {
			t.Errorf("incomplete figure %+v", f)
		}
	}
}
