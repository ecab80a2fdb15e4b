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

// Command measurements writes docs/measurements.{md,json}: the figures the test suites
// measured (test/framework's Measure, which appends them to FIGURES_DIR during make test),
// merged into the figures committed before. `make measurements` runs it. A group of figures
// that the new run measured replaces the group as it was; the other groups (a suite that did
// not run, such as the real node's without root) are kept with their old dates.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

func main() {
	figuresDir := flag.String("figures", "_output/figures", "directory of the figures the tests wrote (FIGURES_DIR), one JSON object a line in *.jsonl")
	out := flag.String("out", "docs", "directory of measurements.md and measurements.json")
	flag.Parse()
	if err := run(*figuresDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "measurements:", err)
		os.Exit(1)
	}
}

// report is docs/measurements.json.
type report struct {
	Figures []framework.FigureRecord `json:"figures"`
}

func run(figuresDir, out string) error {
	jsonPath := filepath.Join(out, "measurements.json")
	var old report
	switch data, err := os.ReadFile(jsonPath); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &old); err != nil {
			return fmt.Errorf("%s: %w", jsonPath, err)
		}
	}
	fresh, err := readFigures(figuresDir)
	if err != nil {
		return err
	}
	if len(fresh) == 0 {
		// Nothing measured: the document is written again from measurements.json as it is.
		fmt.Printf("measurements: no figures in %s (make test writes them there); %s rendered again\n", figuresDir, jsonPath)
	}
	merged := merge(old.Figures, fresh)
	data, err := json.MarshalIndent(report{Figures: merged}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(jsonPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	mdPath := filepath.Join(out, "measurements.md")
	if err := os.WriteFile(mdPath, []byte(markdown(merged)), 0o644); err != nil {
		return err
	}
	fmt.Printf("measurements: %d figures from %s, %d in %s and %s\n", len(fresh), figuresDir, len(merged), mdPath, jsonPath)
	return nil
}

// readFigures reads every *.jsonl file of dir, in name order, line by line.
func readFigures(dir string) ([]framework.FigureRecord, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var figures []framework.FigureRecord
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		scanner := bufio.NewScanner(bytes.NewReader(data))
		for line := 1; scanner.Scan(); line++ {
			if len(bytes.TrimSpace(scanner.Bytes())) == 0 {
				continue
			}
			var f framework.FigureRecord
			if err := json.Unmarshal(scanner.Bytes(), &f); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, line, err)
			}
			if !framework.ValidFigureGroup(f.Group) || f.Name == "" {
				return nil, fmt.Errorf("%s:%d: figure %q/%q: want a group of lower-case words joined by '-' and a name", file, line, f.Group, f.Name)
			}
			figures = append(figures, f)
		}
		if err := scanner.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return figures, nil
}

// merge replaces every group of old that fresh measured by fresh's figures of that group
// (the newest of each name, where a directory holds several runs), and keeps the rest.
func merge(old, fresh []framework.FigureRecord) []framework.FigureRecord {
	measured := map[string]bool{}
	for _, f := range fresh {
		measured[f.Group] = true
	}
	var merged []framework.FigureRecord
	for _, f := range old {
		if !measured[f.Group] {
			merged = append(merged, f)
		}
	}
	index := map[[2]string]int{}
	for _, f := range fresh {
		key := [2]string{f.Group, f.Name}
		if i, ok := index[key]; ok {
			if f.Measured >= merged[i].Measured {
				merged[i] = f
			}
			continue
		}
		index[key] = len(merged)
		merged = append(merged, f)
	}
	// Sections in suite order, groups by name; a group's figures keep the order they were
	// measured in (a stable sort).
	slices.SortStableFunc(merged, func(a, b framework.FigureRecord) int {
		if c := suiteRank(a.Suite) - suiteRank(b.Suite); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
	return merged
}

// suites are the sections of the document, in order.
var suites = []struct{ suite, title, about string }{
	{"hack", "make test", "`hack/test.sh`: the time of a whole `make test` that passed as root (every suite), and of each of its steps."},
	{"integration", "Integration (`test/integration`)", "Our apiserver standalone on an embedded etcd."},
	{"faults", "Faults (`test/faults`)", "Our apiserver as processes on embedded and external etcd, under load."},
	{"e2e", "End to end (`test/e2e`)", "A private local control plane on kwok's fake nodes."},
	{"deploy", "Real node (`test/deploy`, root)", "`artifacts/deploy` as real pods on this machine as a node."},
}

func suiteRank(suite string) int {
	for i, s := range suites {
		if s.suite == suite {
			return i
		}
	}
	return len(suites)
}

// markdown renders the figures, which merge has ordered.
func markdown(figures []framework.FigureRecord) string {
	var b strings.Builder
	b.WriteString("# Measured figures from the test suites\n\n")
	b.WriteString("Generated by `make measurements` from what the tests measured during `make test` " +
		"(`test/framework`'s `Measure` writes each figure to `FIGURES_DIR`). Do not edit: run `make test` " +
		"and `make measurements` again. The documents link here instead of restating a figure; the " +
		"benchmarks (`make bench`) are in [benchmarks.md](benchmarks.md). Machine-readable: " +
		"[measurements.json](measurements.json).\n\n")
	b.WriteString("Each figure is from one run, on whatever else the machine was doing (so far a 2-core " +
		"machine shared with other work): read them as orders of magnitude. A range (low–high) is " +
		"carried over from before the tests wrote their figures: the range of earlier runs as the " +
		"documents stated it, until the next run of its test replaces it.\n")
	suite, group := "\x00", ""
	for _, f := range figures {
		if f.Suite != suite {
			suite, group = f.Suite, ""
			title, about := f.Suite, ""
			if i := suiteRank(f.Suite); i < len(suites) {
				title, about = suites[i].title, suites[i].about
			}
			fmt.Fprintf(&b, "\n## %s\n", title)
			if about != "" {
				fmt.Fprintf(&b, "\n%s\n", about)
			}
		}
		if f.Group != group {
			group = f.Group
			fmt.Fprintf(&b, "\n### %s\n\n%s\n\n| figure | value | what | measured |\n|---|---|---|---|\n", group, testsOf(figures, suite, group))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.Name, cell(value(f)), cell(f.What), cell(when(f)))
	}
	return b.String()
}

// testsOf names the tests that measured a group.
func testsOf(figures []framework.FigureRecord, suite, group string) string {
	var tests []string
	for _, f := range figures {
		if f.Suite == suite && f.Group == group && !slices.Contains(tests, "`"+f.Test+"`") {
			tests = append(tests, "`"+f.Test+"`")
		}
	}
	return "Measured by " + strings.Join(tests, ", ") + "."
}

func value(f framework.FigureRecord) string {
	v := number(f.Value)
	if f.Max != nil {
		v += "–" + number(*f.Max)
	}
	switch {
	case f.Unit == "":
		return v
	case strings.HasPrefix(f.Unit, "/"):
		return v + f.Unit
	default:
		return v + " " + f.Unit
	}
}

// number prints an integer as it is and anything else with three significant digits.
func number(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	decimals := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	if decimals < 0 {
		decimals = 0
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func when(f framework.FigureRecord) string {
	date := f.Measured
	if t, err := time.Parse(time.RFC3339, f.Measured); err == nil {
		date = t.UTC().Format("2006-01-02 15:04 UTC")
	}
	if f.How != "" {
		return date + ", " + f.How
	}
	return date
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
