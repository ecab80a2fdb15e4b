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

package docs

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Measured figures live in one generated place each: docs/benchmarks.md (make bench) and
// docs/measurements.md (make measurements, from what the tests record with
// test/framework's Measure). The documents link there; a figure restated by hand in prose
// goes stale with the next run. TestNoMeasuredFiguresInProse enforces it.
//
// The rule. In the prose of every document but the two generated ones (CHANGELOG.md, which is
// history, is not read at all), that is outside fenced blocks, inline code spans and link
// targets, a measured figure is:
//
//   - a number, or a range of two ("41–61", "0.2 to 0.8"), followed by a unit of time (ns,
//     µs, ms, s, sec, second(s), min, minute(s), hour(s)), of size (B, bytes, kB, KB, MB, GB,
//     KiB, MiB, GiB), of CPU (CPU-seconds, CPU-s), a rate (/s, req/s, or "N [one or two words]
//     a/per second/minute"), a request count ("N requests"), a ratio attached to the number
//     ("1.25x", "2×") or a percentage ("40%");
//   - a percentile followed by a number ("p50 133", "p99 2.3").
//
// A number with such a unit is a setting, not a measurement, and allowed, when the words
// right before it or right after it say so (settingBefore, settingAfter): a default, a
// period ("every 6 hours"), a bound ("at most 128 KiB", "over 1 MiB" of a size), a limit, a
// quota, a cap, a timeout, a grace period, a Lease, a cache period or an interval; when a code
// span naming the flag or field it is the value of comes right before it, in parentheses or
// not ("`timeoutSeconds` (2 s in the test"), or right after it ("a 5 s `preStop` sleep"); or
// when it is an operand or the result of arithmetic on settings (≈, ×, /, +: "512 MiB /
// 256 KiB ≈ 2000"). What no such word marks and is still a setting or a test's set-up is in
// allowedFigures, quoted with its document: keep that list short, and rephrase before adding
// to it. Versions (1.36, v0.2.0), and counts of anything but requests, are not figures; nor
// are words ("a few seconds"), which is how prose states an order of magnitude and links to
// the figure.
func TestNoMeasuredFiguresInProse(t *testing.T) {
	for _, d := range documents(t) {
		if generatedFigures[d.path] {
			continue
		}
		for _, f := range proseFigures(d) {
			if !allowed(d.path, f) {
				t.Errorf("%s: %q is a measured figure in prose: link to the section of docs/benchmarks.md or docs/measurements.md that has it (or, for a setting, see the rule in figures_test.go)", d.where(f.line), f.text)
			}
		}
	}
}

// generatedFigures are the documents the figures are generated into.
var generatedFigures = map[string]bool{"docs/benchmarks.md": true, "docs/measurements.md": true}

// allowedFigures are settings, test set-ups and arithmetic on settings in prose that
// settingBefore and settingAfter do not recognise, by document: the figure's text as
// proseFigures reports it, with enough context to be unique.
var allowedFigures = map[string][]string{
	"docs/api.md": {
		"5 s after the controller asked",     // the controller's content-sync delay
		"25% more at a time",                 // the Deployment's default surge
		"5 s after they are told to stop",    // the preStop sleep
		"| 128 KiB (131072 bytes)",           // the Limits table: bounds
		"Kubernetes' 256 KiB in all",         //
		"| 256 KiB (262144 bytes)",           //
		"| 1 MiB (413 above)",                //
		"256 KiB is a sixth",                 //
		"1 MiB leaves room",                  //
		"for more than 20 s without passing", // ContainerNotReady's threshold
	},
	"docs/controller.md": {
		"touches a pod again after 5 s", // the content-sync delay
		"(5 ms, doubling",               // the retry backoff's base
	},
	"docs/design.md":      {"buffered 64 KiB at a time"},
	"docs/development.md": {"(5 s in the e2e stack)", "each 4 KiB to the connection", "a 64 KiB buffer"},
	"docs/operations.md": {
		"536870912 (512 MiB)",          // a chart default
		"denials for 30 seconds",       // the authorization cache
		"configuration for 10 minutes", // alerts' for
		"refused, for 10 minutes,",     //
	},
	"docs/reliability.md": {
		"updates of 100 KiB annotations", // the NOSPACE test's set-up
		"firing after 5 minutes",         // the alert's for
	},
	"docs/security.md": {"waits 10 s and is refused"}, // a webhook's default timeoutSeconds
}

// figure is a figure found in prose, with the text around it.
type figure struct {
	line                int
	text, before, after string
	size                bool
}

var (
	number = `\d+(?:[.,]\d+)*`
	span   = number + `(?:\s*(?:–|-|to)\s*` + number + `)?`
	// unitRE matches a figure with a unit; the unit must end the word.
	unitRE = regexp.MustCompile(`(?:^|[^\w.])(` + span + `)(?:` +
		`\s?(ns|µs|us|ms|seconds?|min|minutes?|hours?|B|bytes|kB|KB|MB|GB|KiB|MiB|GiB|CPU-seconds|CPU-s|req/s|requests)` +
		`|\s(s|sec)` + // "10s" would be a plural: "403s"

		`|(/s|x|×|%)` +
		`|((?:\s+[A-Za-z]+){0,2}\s+(?:a|per)\s+(?:second|minute))` +
		`)(?:\W|$)`)
	percentileRE = regexp.MustCompile(`\bp(?:50|90|95|99)\s+` + number)
	sizeUnits    = map[string]bool{"B": true, "bytes": true, "kB": true, "KB": true, "MB": true, "GB": true, "KiB": true, "MiB": true, "GiB": true}

	settingBefore = regexp.MustCompile(`(?i)(\bevery|\bdefaults?(?: is| of| to)?|\bat most|\bup to|\b(?:limit|quota|cap|timeout|lease|period|interval)(?: of| is)?|\bcached for|` + "`" + `)\s*\(?\s*$`)
	sizeBefore    = regexp.MustCompile(`(?i)\b(over|above|beyond|past|pass|passes|under|below)\s*$`)
	settingAfter  = regexp.MustCompile(`(?i)^\s*(?:(?:by default|default|limit|request limit|quota|cap|timeout|(?:termination )?grace period|lease|cache period|interval)\b|` + "`" + `)`)
	// arithmeticRE: an operand or result of arithmetic on settings ("512 MiB / 256 KiB ≈ 2000").
	arithmeticBefore = regexp.MustCompile(`[≈×/+]\s*\(?\s*$`)
	arithmeticAfter  = regexp.MustCompile(`^\s*\)?\s*[≈×/+]`)
)

// proseFigures finds the figures in a document's prose: paragraph by paragraph (a table
// row is a paragraph of its own), code and link targets blanked.
func proseFigures(d *document) []figure {
	fenced := map[int]bool{}
	for _, s := range d.spans {
		if s.fenced {
			fenced[s.line] = true
		}
	}
	var figures []figure
	var para []string
	start := 0
	flush := func() {
		if len(para) == 0 {
			return
		}
		text := blankCode(strings.Join(para, "\n"))
		lineAt := func(off int) int { return start + strings.Count(text[:off], "\n") }
		for _, m := range unitRE.FindAllStringSubmatchIndex(text, -1) {
			unit, end := "", m[3]
			for g := 2; g < len(m)/2; g++ { // the unit's group that matched
				if m[2*g] >= 0 {
					unit, end = text[m[2*g]:m[2*g+1]], m[2*g+1]
				}
			}
			figures = append(figures, figure{line: lineAt(m[2]), text: text[m[2]:end],
				before: text[:m[2]], after: text[end:], size: sizeUnits[unit]})
		}
		for _, m := range percentileRE.FindAllStringIndex(text, -1) {
			figures = append(figures, figure{line: lineAt(m[0]), text: text[m[0]:m[1]], before: text[:m[0]], after: text[m[1]:]})
		}
		para = nil
	}
	for i, line := range d.lines {
		n := i + 1
		switch {
		case fenced[n] || fenceRE.MatchString(line) || strings.TrimSpace(line) == "" || headingRE.MatchString(line):
			flush()
		case strings.HasPrefix(strings.TrimSpace(line), "|"):
			flush()
			para, start = []string{line}, n
			flush()
		default:
			if len(para) == 0 {
				start = n
			}
			para = append(para, line)
		}
	}
	flush()
	return figures
}

// allowed reports whether a figure is a setting (see the rule above).
func allowed(path string, f figure) bool {
	if settingBefore.MatchString(f.before) || settingAfter.MatchString(f.after) || f.size && sizeBefore.MatchString(f.before) ||
		arithmeticBefore.MatchString(f.before) || arithmeticAfter.MatchString(f.after) {
		return true
	}
	// An entry allows the figures it contains where it is quoted (across a line break), no other.
	text, at := f.before+f.text+f.after, len(f.before)
	for _, a := range allowedFigures[path] {
		quoted := regexp.MustCompile(strings.Join(strings.Fields(regexp.QuoteMeta(a)), `\s+`))
		for _, m := range quoted.FindAllStringIndex(text, -1) {
			if m[0] <= at && at+len(f.text) <= m[1] {
				return true
			}
		}
	}
	return false
}

var linkTargetRE = regexp.MustCompile(`\]\([^)]*\)`)

// blankCode replaces the content of inline code spans and link targets with underscores,
// keeping the text's length and line breaks.
func blankCode(text string) string {
	b := []byte(text)
	for _, s := range codeSpanBounds(text) {
		for x := s.from; x < s.to; x++ {
			if b[x] != '\n' {
				b[x] = '_'
			}
		}
	}
	for _, m := range linkTargetRE.FindAllIndex(b, -1) {
		for x := m[0] + 2; x < m[1]-1; x++ {
			b[x] = '_'
		}
	}
	return string(b)
}

// TestTheFigureRule shows the rule failing on figures and passing settings, code and
// versions: a document of the samples below, each on a line of its own.
func TestTheFigureRule(t *testing.T) {
	measured := []string{
		"a LIST is 5.2x faster than the CRD's",
		"(p50 133 against 683 ms)",
		"three members replaced in 41–61 s",
		"the rules held 0.2 to 0.8 s after",
		"clients of the other see 0 errors (986 requests)",
		"100 objects × 1000 status updates (600–1450 a second)",
		"peak RSS 192 MiB.",
		"| protobuf | 826 (-32%) |",
		"about 28 KiB per NginxOperator",
		"retries (7–9 attempts a minute)",
		"was deploy 1035 CPU-seconds",
		"the next is refused in 7 ms with",
	}
	settings := []string{
		"with `--request-timeout 60s` and `FUZZTIME` (10 s by default)",
		"a CronJob that snapshots etcd every 6 hours",
		"`timeoutSeconds` (2 s in the test, not the default 10 s)",
		"an inline nginx.conf of at most 128 KiB, a body over 1 MiB",
		"within the pod's 30 s termination grace period",
		"(`TestControllerLeaderFailover`, default Lease of 15 s)",
		"the 403s included, on Kubernetes 1.36 and v0.2.0 with 3 members",
		"512 MiB / 256 KiB ≈ 2000 objects",
		"see [the table](benchmarks.md#list-all-one-at-a-time--10000-objects)",
		"```sh\nsleep 5 s\n```",
	}
	d := parseMarkdown("docs/sample.md", strings.Join(measured, "\n\n")+"\n\n"+strings.Join(settings, "\n\n")+"\n")
	var flagged []string
	for _, f := range proseFigures(d) {
		if !allowed(d.path, f) {
			flagged = append(flagged, f.text)
		}
	}
	want := []string{"5.2x", "p50 133", "683 ms", "41–61 s", "0.2 to 0.8 s", "986 requests", "600–1450 a second", "192 MiB", "32%", "28 KiB", "7–9 attempts a minute", "1035 CPU-seconds", "7 ms"}
	slices.Sort(flagged)
	slices.Sort(want)
	if !slices.Equal(flagged, want) {
		t.Errorf("flagged %q, want %q", flagged, want)
	}
}
