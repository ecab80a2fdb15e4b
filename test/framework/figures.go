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

// Measured figures: what a test measured (a recovery time, a request count, a size) and
// the documents quote, written where `make measurements` (test/measurements) turns it into
// docs/measurements.md, so that no document restates a figure by hand.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// FiguresDirEnv names the directory the figures are appended to; hack/test.sh (make test)
// and the Makefile's test targets set it. Unset, figures are only logged.
const FiguresDirEnv = "FIGURES_DIR"

// FigureRecord is one measured figure as written to FIGURES_DIR, one JSON object a line, and
// as docs/measurements.json keeps it.
type FigureRecord struct {
	// Group is the heading of docs/measurements.md the figure is listed under, and the
	// anchor the documents link to: lower case words joined by '-'.
	Group string `json:"group"`
	// Name tells the figure apart within its group.
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Max, when set, makes the figure the range Value–Max over several runs (figures
	// carried over from before the tests wrote them; a run writes one value).
	Max  *float64 `json:"max,omitempty"`
	Unit string   `json:"unit,omitempty"`
	// What says what was measured, in a phrase.
	What string `json:"what"`
	// Suite and Test are where it was measured: test/<Suite>, t.Name().
	Suite string `json:"suite"`
	Test  string `json:"test"`
	// Measured is when (RFC 3339, UTC), or a date for carried-over figures.
	Measured string `json:"measured"`
	// How is how the figure was obtained when not by a run of Test (carried-over figures).
	How string `json:"how,omitempty"`
}

// Figures records the figures of one group.
type Figures struct {
	t     testing.TB
	group string
}

// Measure returns the recorder of a group of figures for t.
func Measure(t testing.TB, group string) Figures { return Figures{t: t, group: group} }

// Duration records a duration, in seconds.
func (f Figures) Duration(name string, d time.Duration, what string) {
	f.t.Helper()
	f.Value(name, d.Round(time.Millisecond).Seconds(), "s", what)
}

// Millis records a short duration, in milliseconds.
func (f Figures) Millis(name string, d time.Duration, what string) {
	f.t.Helper()
	f.Value(name, float64(d.Round(10*time.Microsecond).Microseconds())/1000, "ms", what)
}

// Count records a number of things, e.g. requests or updates, named by unit.
func (f Figures) Count(name string, n int, unit, what string) {
	f.t.Helper()
	f.Value(name, float64(n), unit, what)
}

// Value logs `FIGURE group/name=value unit` and appends the figure to FIGURES_DIR when set.
// A figure that cannot be written fails the test: a run that should feed the document must
// not pass without it.
func (f Figures) Value(name string, v float64, unit, what string) {
	f.t.Helper()
	if !ValidFigureGroup(f.group) || !ValidFigureGroup(name) {
		f.t.Errorf("figure %s/%s: group and name are lower-case words joined by '-'", f.group, name)
	}
	f.t.Logf("FIGURE %s/%s=%g %s (%s)", f.group, name, v, unit, what)
	dir := os.Getenv(FiguresDirEnv)
	if dir == "" {
		return
	}
	wd, _ := os.Getwd()
	line, err := json.Marshal(FigureRecord{
		Group: f.group, Name: name, Value: v, Unit: unit, What: what,
		Suite: filepath.Base(wd), Test: f.t.Name(),
		Measured: time.Now().UTC().Format(time.RFC3339),
	})
	if err == nil {
		err = appendFigure(dir, line)
	}
	if err != nil {
		f.t.Errorf("writing figure %s/%s to %s: %v", f.group, name, dir, err)
	}
}

var figuresMu sync.Mutex

// appendFigure appends one line to this process's file in dir: a file per process, so that
// suites running side by side never interleave their writes.
func appendFigure(dir string, line []byte) error {
	figuresMu.Lock()
	defer figuresMu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("figures-%d.jsonl", os.Getpid())), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = file.Write(append(line, '\n'))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// ValidFigureGroup reports whether group can be a heading whose anchor is the group itself.
func ValidFigureGroup(group string) bool {
	if group == "" || strings.HasPrefix(group, "-") || strings.HasSuffix(group, "-") {
		return false
	}
	for _, r := range group {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}
