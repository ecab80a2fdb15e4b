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

// Reading the documents: fenced blocks, inline code spans, headings and links, each with
// the line it starts on, so that a failure names file:line.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"
)

var repoRoot = filepath.Join("..", "..")

// document is one Markdown file a user reads.
type document struct {
	path     string // relative to the repository root, e.g. docs/operations.md
	lines    []string
	spans    []codeSpan // inline code spans and the lines of fenced blocks
	blocks   []fencedBlock
	headings []string // GitHub's anchors of the headings, in order
	links    []link
}

// codeSpan is an inline code span (newlines inside it turned into spaces) or one line of a
// fenced block.
type codeSpan struct {
	line   int
	text   string
	fenced bool
	lang   string
}

// fencedBlock is a fenced code block; marker is NAME of a `<!-- real-node: NAME -->` comment on
// the last non-blank line before its opening fence.
type fencedBlock struct {
	start  int // the line of the first content line
	lang   string
	marker string
	lines  []string
}

type link struct {
	line   int
	target string
}

// where is file:line, for failure messages.
func (d *document) where(line int) string { return fmt.Sprintf("%s:%d", d.path, line) }

var (
	docsOnce sync.Once
	docsRead []*document
	docsErr  error
)

// documents reads README.md, CONTRIBUTING.md, SECURITY.md, artifacts/overlays/README.md and
// docs/*.md once. CHANGELOG.md is history: it
// names what existed then, on purpose.
func documents(t *testing.T) []*document {
	t.Helper()
	docsOnce.Do(func() {
		paths, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
		if err != nil {
			docsErr = err
			return
		}
		for i := range paths {
			paths[i], _ = filepath.Rel(repoRoot, paths[i])
		}
		sort.Strings(paths)
		paths = append([]string{"README.md", "CONTRIBUTING.md", "SECURITY.md", "artifacts/overlays/README.md"}, paths...)
		for _, p := range paths {
			data, err := os.ReadFile(filepath.Join(repoRoot, p))
			if err != nil {
				docsErr = err
				return
			}
			docsRead = append(docsRead, parseMarkdown(filepath.ToSlash(p), string(data)))
		}
	})
	if docsErr != nil {
		t.Fatal(docsErr)
	}
	if len(docsRead) < 5 {
		t.Fatalf("found only %d documents", len(docsRead))
	}
	return docsRead
}

func docByPath(t *testing.T, path string) *document {
	t.Helper()
	for _, d := range documents(t) {
		if d.path == path {
			return d
		}
	}
	t.Fatalf("no document %s", path)
	return nil
}

var (
	fenceRE   = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	markerRE  = regexp.MustCompile(`^\s*<!--\s*real-node:\s*([a-z0-9-]+)\s*-->\s*$`)
	linkRE    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
)

func parseMarkdown(path, text string) *document {
	d := &document{path: path, lines: strings.Split(strings.TrimSuffix(text, "\n"), "\n")}
	slugs := map[string]int{}
	var para []string // the current paragraph's lines, for code spans that cross lines
	paraStart := 0
	flush := func() {
		if len(para) > 0 {
			d.spans = append(d.spans, inlineSpans(para, paraStart)...)
			for i, l := range para {
				for _, m := range linkRE.FindAllStringSubmatch(stripSpans(l), -1) {
					d.links = append(d.links, link{line: paraStart + i, target: m[1]})
				}
			}
		}
		para = nil
	}
	for i := 0; i < len(d.lines); i++ {
		line, n := d.lines[i], i+1
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			flush()
			fence := m[1]
			block := fencedBlock{start: n + 1, lang: m[2]}
			for j := i - 1; j >= 0; j-- {
				if strings.TrimSpace(d.lines[j]) == "" {
					continue
				}
				if mm := markerRE.FindStringSubmatch(d.lines[j]); mm != nil {
					block.marker = mm[1]
				}
				break
			}
			indent := len(line) - len(strings.TrimLeft(line, " "))
			for i++; i < len(d.lines); i++ {
				l := d.lines[i]
				if t := strings.TrimSpace(l); strings.HasPrefix(t, fence[:1]) && strings.Trim(t, fence[:1]) == "" && len(t) >= len(fence) {
					break
				}
				// Content lines of a fence inside a list item lose the item's indentation.
				if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
					l = l[indent:]
				}
				block.lines = append(block.lines, l)
				d.spans = append(d.spans, codeSpan{line: i + 1, text: l, fenced: true, lang: block.lang})
			}
			d.blocks = append(d.blocks, block)
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			flush()
			slug := githubSlug(m[2])
			if k := slugs[slug]; k > 0 {
				d.headings = append(d.headings, fmt.Sprintf("%s-%d", slug, k))
			} else {
				d.headings = append(d.headings, slug)
			}
			slugs[slug]++
			para, paraStart = []string{line}, n
			flush()
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			paraStart = n
		}
		para = append(para, line)
	}
	flush()
	return d
}

// inlineSpans finds the code spans of a paragraph as CommonMark does: a run of n backticks
// opens one and the next run of exactly n closes it.
func inlineSpans(lines []string, start int) []codeSpan {
	text := strings.Join(lines, "\n")
	lineAt := func(off int) int { return start + strings.Count(text[:off], "\n") }
	var spans []codeSpan
	for _, b := range codeSpanBounds(text) {
		content := strings.ReplaceAll(text[b.from:b.to], "\n", " ")
		if len(content) > 2 && content[0] == ' ' && content[len(content)-1] == ' ' {
			content = content[1 : len(content)-1]
		}
		spans = append(spans, codeSpan{line: lineAt(b.open), text: content})
	}
	return spans
}

// spanBounds is where a code span is in a text: its opening backticks at open, its content
// from from to to.
type spanBounds struct{ open, from, to int }

// codeSpanBounds finds the code spans of a text as CommonMark does: a run of n backticks
// opens one and the next run of exactly n closes it; a backslash escapes what follows it
// outside a span.
func codeSpanBounds(text string) []spanBounds {
	var bounds []spanBounds
	for i := 0; i < len(text); {
		if text[i] != '`' {
			if text[i] == '\\' {
				i++
			}
			i++
			continue
		}
		j := i
		for j < len(text) && text[j] == '`' {
			j++
		}
		run := j - i
		closed := false
		for k := j; k < len(text); {
			if text[k] != '`' {
				k++
				continue
			}
			l := k
			for l < len(text) && text[l] == '`' {
				l++
			}
			if l-k == run {
				bounds = append(bounds, spanBounds{open: i, from: j, to: k})
				i, closed = l, true
				break
			}
			k = l
		}
		if !closed {
			i = j
		}
	}
	return bounds
}

var spanRE = regexp.MustCompile("`[^`]*`")

// stripSpans blanks a line's code spans, so that a link inside one is not taken as a link.
func stripSpans(line string) string { return spanRE.ReplaceAllString(line, "``") }

// githubSlug is the anchor GitHub gives a heading: lower case, punctuation but hyphens and
// underscores removed, spaces turned into hyphens.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestParseMarkdown(t *testing.T) {
	d := parseMarkdown("x.md", "# A `b` c\n\nsome `make x\ny` and ``a ` b`` [l](docs/api.md#x \"t\")\n"+
		"<!-- real-node: k -->\n\n  ```sh\n  kubectl apply -k a\n  ```\n## A b c\n`unclosed\n")
	want := []codeSpan{{1, "b", false, ""}, {3, "make x y", false, ""}, {4, "a ` b", false, ""}, {8, "kubectl apply -k a", true, "sh"}}
	if fmt.Sprint(d.spans) != fmt.Sprint(want) {
		t.Errorf("spans %v, want %v", d.spans, want)
	}
	if len(d.blocks) != 1 || d.blocks[0].marker != "k" || d.blocks[0].start != 8 || len(d.blocks[0].lines) != 1 {
		t.Errorf("blocks %+v", d.blocks)
	}
	if fmt.Sprint(d.headings) != "[a-b-c a-b-c-1]" {
		t.Errorf("headings %v", d.headings)
	}
	if len(d.links) != 1 || d.links[0] != (link{4, "docs/api.md#x"}) {
		t.Errorf("links %v", d.links)
	}
}
