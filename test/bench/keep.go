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
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
)

// keepPrevious merges the report this run replaces (path, benchmarks.json) into r.
// A run of the API scenarios (make bench) keeps the convergence runs at scale (make
// bench-controller's, atScale objects or more) of sizes it did not measure; a
// convergence-only run keeps everything but the run of its own size. A missing report, or one this version cannot read, is
// left out.
func keepPrevious(path string, r *Result, logf func(string, ...any)) (*Result, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	var prev Result
	if err := json.Unmarshal(data, &prev); err != nil {
		logf("keeping nothing of %s: %v", path, err)
		return r, nil
	}
	return mergeResults(&prev, r), nil
}

// mergeResults is r with what prev measured and r did not.
func mergeResults(prev, r *Result) *Result {
	merged := r
	if !r.Settings.Scenarios && len(prev.Ops) > 0 {
		m := *prev
		m.Versions = maps.Clone(prev.Versions)
		if m.Versions == nil {
			m.Versions = map[string]string{}
		}
		maps.Copy(m.Versions, r.Versions)
		m.Goals = nil
		merged = &m
	}
	runs := slices.Clone(r.Convergence)
	for _, old := range prev.Convergence {
		if old == nil || (r.Settings.Scenarios && old.N < atScale) {
			continue
		}
		if !slices.ContainsFunc(runs, func(c *ConvergenceRun) bool { return c.N == old.N }) {
			runs = append(runs, old)
		}
	}
	slices.SortFunc(runs, func(a, b *ConvergenceRun) int { return cmp.Compare(a.N, b.N) })
	merged.Convergence = runs
	// A run that did not measure revisions keeps the previous figures.
	merged.Revisions = r.Revisions
	if merged.Revisions == nil {
		merged.Revisions = prev.Revisions
	}
	return merged
}
