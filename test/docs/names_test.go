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

// What the documents name must exist: make targets and their variables, scripts, their flags
// and environment, paths, links and anchors, chart values, metrics and alerts.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func exists(path string) bool {
	_, err := os.Stat(filepath.Join(repoRoot, path))
	return err == nil
}

// commandSpans are the spans that hold commands: inline code spans and the lines of fenced
// blocks that are not YAML, JSON or Go.
func commandSpans(d *document) []codeSpan {
	var out []codeSpan
	for _, s := range d.spans {
		switch s.lang {
		case "yaml", "json", "go", "text", "promql":
			continue
		}
		out = append(out, s)
	}
	return out
}

// withoutComment cuts a shell comment off a command line.
func withoutComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	if strings.HasPrefix(strings.TrimSpace(s), "#") {
		return ""
	}
	return s
}

var (
	makeTargetRE = regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+(?:[ \t]+[A-Za-z0-9_.-]+)*)[ \t]*:(?:[^=]|$)`)
	assignment   = `[A-Z_][A-Z0-9_]*=(?:'[^']*'|"[^"]*"|[^\s;&|]*)`
	makeUseRE    = regexp.MustCompile(`(?:^|[\s;&|(])((?:` + assignment + `\s+)*)make((?:\s+` + assignment + `)*)\s+([a-z][-a-z0-9]*)((?:\s+` + assignment + `)*)`)
	assignmentRE = regexp.MustCompile(`([A-Z_][A-Z0-9_]*)=`)
	envNameRE    = regexp.MustCompile(`\b[A-Z_][A-Z0-9_]*\b`)
)

// TestMakeTargets: every `make <target>` names a target of the Makefile, and every VAR=value
// given with it is a variable the Makefile or a script under hack/ reads.
func TestMakeTargets(t *testing.T) {
	makefile := readRepoFile(t, "Makefile")
	targets := map[string]bool{}
	for _, m := range makeTargetRE.FindAllStringSubmatch(makefile, -1) {
		for _, name := range strings.Fields(m[1]) {
			targets[name] = true
		}
	}
	for _, want := range []string{"build", "test", "run", "verify"} {
		if !targets[want] {
			t.Fatalf("the Makefile parser found no target %q: %v", want, targets)
		}
	}
	known := envNames(t, makefile, hackScripts(t)...)
	checked := 0
	for _, d := range documents(t) {
		for _, s := range commandSpans(d) {
			for _, m := range makeUseRE.FindAllStringSubmatch(withoutComment(s.text), -1) {
				checked++
				if !targets[m[3]] {
					t.Errorf("%s: `make %s`: the Makefile has no target %s", d.where(s.line), m[3], m[3])
				}
				for _, a := range assignmentRE.FindAllStringSubmatch(m[1]+m[2]+m[4], -1) {
					if !known[a[1]] {
						t.Errorf("%s: `%s`: neither the Makefile nor a script under hack/ reads %s", d.where(s.line), strings.TrimSpace(m[0]), a[1])
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("found only %d make commands in the documents", checked)
	}
	t.Logf("%d make commands checked against %d targets", checked, len(targets))
}

// hackScripts are the shell scripts under hack/, relative to the repository root.
func hackScripts(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(repoRoot, "hack"), func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == "bin" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".sh") {
			rel, _ := filepath.Rel(repoRoot, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// envNames is every upper-case word of text and of the files.
func envNames(t *testing.T, text string, files ...string) map[string]bool {
	t.Helper()
	for _, f := range files {
		text += readRepoFile(t, f)
	}
	names := map[string]bool{}
	for _, n := range envNameRE.FindAllString(text, -1) {
		names[n] = true
	}
	return names
}

var (
	scriptUseRE = regexp.MustCompile(`(?:^|[\s;&|(])((?:` + assignment + `\s+)*)(?:bash\s+)?(?:\./)?(hack/[A-Za-z0-9_./-]+\.sh)((?:[ \t]+[^\s;&|#)]+)*)`)
	caseArmRE   = regexp.MustCompile(`(?m)^\s*((?:'[^']*'|"[^"]*"|[-A-Za-z0-9_*/]+)(?:\s*\|\s*(?:'[^']*'|"[^"]*"|[-A-Za-z0-9_*/]+))*)\)`)
	flagRE      = regexp.MustCompile(`^--?[A-Za-z0-9][-A-Za-z0-9]*`)
	libRE       = regexp.MustCompile(`lib-[a-z0-9-]+\.sh`)
)

// scriptFlags are the flags a script's case arms accept, e.g. `--print-only | --dry-run)`.
func scriptFlags(text string) map[string]bool {
	flags := map[string]bool{}
	for _, m := range caseArmRE.FindAllStringSubmatch(text, -1) {
		for _, alt := range strings.Split(m[1], "|") {
			alt = strings.Trim(strings.TrimSpace(alt), `'"`)
			if f := flagRE.FindString(alt); f != "" && f == alt {
				flags[f] = true
			}
		}
	}
	return flags
}

// TestScriptsAndFlags: every hack/ script a command runs exists, every flag given to it is
// one of its case arms, and every VAR=value before it is a name the script or a library it
// sources reads.
func TestScriptsAndFlags(t *testing.T) {
	if got := scriptFlags(readRepoFile(t, "hack/deploy-certs.sh")); !got["--print-only"] || !got["--etcd-only"] || !got["--help"] {
		t.Fatalf("the case-arm parser found %v in hack/deploy-certs.sh", got)
	}
	checked := 0
	for _, d := range documents(t) {
		for _, s := range commandSpans(d) {
			for _, m := range scriptUseRE.FindAllStringSubmatch(withoutComment(s.text), -1) {
				script := m[2]
				if strings.HasPrefix(script, "hack/tools/bin/") { // make tools writes it
					continue
				}
				if !exists(script) {
					t.Errorf("%s: `%s`: %s does not exist", d.where(s.line), strings.TrimSpace(m[0]), script)
					continue
				}
				checked++
				text := readRepoFile(t, script)
				flags := scriptFlags(text)
				for _, arg := range strings.Fields(m[3]) {
					arg = strings.Trim(arg, `'"`)
					if !strings.HasPrefix(arg, "-") {
						continue
					}
					name, _, _ := strings.Cut(arg, "=")
					if !flags[name] {
						t.Errorf("%s: `%s`: %s accepts no flag %s (its flags: %s)", d.where(s.line), strings.TrimSpace(m[0]), script, name, sortedKeys(flags))
					}
				}
				libs := libRE.FindAllString(text, -1)
				for i := range libs {
					libs[i] = "hack/" + libs[i]
				}
				known := envNames(t, text, libs...)
				for _, a := range assignmentRE.FindAllStringSubmatch(m[1], -1) {
					if !known[a[1]] {
						t.Errorf("%s: `%s`: %s does not read %s", d.where(s.line), strings.TrimSpace(m[0]), script, a[1])
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("found only %d script commands in the documents", checked)
	}
	t.Logf("%d script commands checked", checked)
}

func sortedKeys(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

var (
	pathRE  = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./$-])(?:\./)?((?:artifacts|bundle|charts|cmd|docs|hack|pkg|test)/[A-Za-z0-9_.{},*/+-]*)`)
	braceRE = regexp.MustCompile(`\{([^{}]*)\}`)
)

// upstreamPaths are the paths the documents name inside other projects' modules (the
// library seams of docs/development.md, Kubernetes' own code), which look like ours; each
// with its module. TestUpstreamPaths checks them in the module cache.
var upstreamPaths = map[string]string{
	"pkg/authorization/authorizer/interfaces.go":                        "k8s.io/apiserver",
	"pkg/endpoints/handlers/responsewriters":                            "k8s.io/apiserver",
	"pkg/endpoints/installer.go":                                        "k8s.io/apiserver",
	"pkg/registry/generic/registry/store.go":                            "k8s.io/apiserver",
	"pkg/server/config.go":                                              "k8s.io/apiserver",
	"pkg/server/deleted_kinds.go":                                       "k8s.io/apiserver",
	"pkg/server/filters/maxinflight.go":                                 "k8s.io/apiserver",
	"pkg/server/options/admission.go":                                   "k8s.io/apiserver",
	"pkg/server/options/authentication.go":                              "k8s.io/apiserver",
	"pkg/server/options/etcd.go":                                        "k8s.io/apiserver",
	"pkg/storage/etcd3/errors.go":                                       "k8s.io/apiserver",
	"pkg/storage/interfaces.go":                                         "k8s.io/apiserver",
	"pkg/registry/apiservice":                                           "k8s.io/kube-aggregator",
	"pkg/registry/customresource":                                       "k8s.io/apiextensions-apiserver",
	"pkg/apis/core/validation":                                          "k8s.io/kubernetes",
	"pkg/controller/namespace/deletion/namespaced_resources_deleter.go": "k8s.io/kubernetes",
	"pkg/controller/storageversionmigrator":                             "k8s.io/kubernetes",
	"pkg/registry/apps/deployment/storage":                              "k8s.io/kubernetes",
	"pkg/client/typed_client.go":                                        "sigs.k8s.io/controller-runtime",
	"pkg/controller/controller.go":                                      "sigs.k8s.io/controller-runtime",
	"pkg/handler/eventhandler.go":                                       "sigs.k8s.io/controller-runtime",
	"pkg/metrics/filters/filters.go":                                    "sigs.k8s.io/controller-runtime",
}

// symbolOfPackage says whether p is package.Symbol of one of our packages, as profiles
// name functions (pkg/apiserver.resourceWideFirst.Authorize).
func symbolOfPackage(p string) bool {
	dir, last := filepath.Split(p)
	pkg, _, ok := strings.Cut(last, ".")
	if !ok || strings.HasSuffix(last, ".go") || strings.HasSuffix(last, ".md") {
		return false
	}
	info, err := os.Stat(filepath.Join(repoRoot, dir, pkg))
	return err == nil && info.IsDir()
}

// moduleVersion is the version of module the repository's go.mod files select (a replace
// wins; v0.0.0 placeholders do not count).
func moduleVersion(t *testing.T, module string) string {
	t.Helper()
	version := ""
	for _, f := range []string{"go.mod", "test/go.mod", "hack/go.mod", "hack/tools/go.mod"} {
		for _, line := range strings.Split(readRepoFile(t, f), "\n") {
			line, _, _ = strings.Cut(line, "//")
			left, right, replaced := strings.Cut(line, "=>")
			if replaced {
				if r := strings.Fields(right); len(r) == 2 && r[0] == module {
					return r[1]
				}
				continue
			}
			fields := strings.Fields(left)
			if len(fields) > 0 && (fields[0] == "require" || fields[0] == "replace") {
				fields = fields[1:]
			}
			if len(fields) == 2 && fields[0] == module && fields[1] != "v0.0.0" && version == "" {
				version = fields[1]
			}
		}
	}
	return version
}

// TestUpstreamPaths: the other projects' paths the documents name exist in those modules, at
// the versions the repository builds with, where the module cache has them.
func TestUpstreamPaths(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env GOMODCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	checked := 0
	for p, module := range upstreamPaths {
		version := moduleVersion(t, module)
		if version == "" {
			t.Errorf("no go.mod of the repository requires %s, whose %s the documents name", module, p)
			continue
		}
		dir := filepath.Join(cache, module+"@"+version)
		if _, err := os.Stat(dir); err != nil {
			t.Logf("%s@%s is not in the module cache; %s not checked", module, version, p)
			continue
		}
		checked++
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("the documents name %s of %s, which %s does not have", p, module, version)
		}
	}
	t.Logf("%d of %d upstream paths checked in the module cache", checked, len(upstreamPaths))
}

// TestPaths: every path under artifacts/, bundle/, charts/, cmd/, docs/, hack/, pkg/ or test/
// that a document names exists (hack/tools/bin/, which make tools fills, excepted).
func TestPaths(t *testing.T) {
	checked := 0
	for _, d := range documents(t) {
		for n, line := range d.lines {
			for _, m := range pathRE.FindAllStringSubmatch(line, -1) {
				p := strings.TrimRight(m[1], ".,:;")
				p = strings.TrimSuffix(strings.TrimSuffix(p, "/..."), "/")
				if strings.HasPrefix(p, "hack/tools/bin") || strings.HasSuffix(p, "-") {
					continue
				}
				if _, ok := upstreamPaths[p]; ok {
					continue
				}
				if symbolOfPackage(p) {
					continue
				}
				checked++
				found := false
				for _, q := range expandBraces(p) {
					if strings.ContainsAny(q, "*") {
						matches, _ := filepath.Glob(filepath.Join(repoRoot, q))
						found = len(matches) > 0
					} else {
						found = exists(q)
					}
					if !found {
						break
					}
				}
				if !found {
					t.Errorf("%s: %s does not exist", d.where(n+1), p)
				}
			}
		}
	}
	t.Logf("%d paths checked", checked)
}

func expandBraces(p string) []string {
	m := braceRE.FindStringSubmatchIndex(p)
	if m == nil {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[m[2]:m[3]], ",") {
		out = append(out, expandBraces(p[:m[0]]+alt+p[m[1]:])...)
	}
	return out
}

// TestLinks: every relative link leads to a file, and every #anchor to a heading of it.
func TestLinks(t *testing.T) {
	anchors := map[string][]string{}
	for _, d := range documents(t) {
		anchors[d.path] = d.headings
	}
	checked := 0
	for _, d := range documents(t) {
		for _, l := range d.links {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(l.target, "#")
			target := d.path
			if file != "" {
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(d.path), file)))
				if strings.HasPrefix(target, "../") || !exists(target) {
					t.Errorf("%s: the link %s leads to %s, which does not exist", d.where(l.line), l.target, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			headings, ok := anchors[target]
			if !ok {
				headings = parseMarkdown(target, readRepoFile(t, target)).headings
			}
			if !slices.Contains(headings, anchor) {
				t.Errorf("%s: the link %s: %s has no heading #%s", d.where(l.line), l.target, target, anchor)
			}
		}
	}
	t.Logf("%d links checked", checked)
}

// chartValues is the chart's values.yaml.
func chartValues(t *testing.T) map[string]any {
	t.Helper()
	var values map[string]any
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "charts/nginx-operator/values.yaml")), &values); err != nil {
		t.Fatal(err)
	}
	return values
}

// hasValue says whether values has the dotted key: a path to a value, or below a map that is
// empty by default (labels, nodeSelector, ...), where any key goes.
func hasValue(values map[string]any, key string) bool {
	var node any = values
	for _, part := range strings.Split(key, ".") {
		m, ok := node.(map[string]any)
		if !ok {
			return false
		}
		if len(m) == 0 {
			return true
		}
		if node, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

var (
	setRE        = regexp.MustCompile(`--set(?:-string|-json|-file)?[ =]['"]?([A-Za-z][A-Za-z0-9_.]*)(?:\[[0-9]+\])?=`)
	valueKeyRE   = regexp.MustCompile(`^([a-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)+)(?:=\S*)?$`)
	valueTableRE = regexp.MustCompile(`^\|\s*value\s*\|`)
	valueNameRE  = regexp.MustCompile("`((?:\\*\\.|\\.)?[A-Za-z][A-Za-z0-9_.]*)`")
)

// TestChartValues: every chart value a document names exists in values.yaml: those given to
// --set, those of the values table in docs/operations.md, and a span such as
// `etcd.members=1` on a line about Helm or the chart.
func TestChartValues(t *testing.T) {
	values := chartValues(t)
	check := func(d *document, line int, key, how string) {
		if !hasValue(values, key) {
			t.Errorf("%s: %s names the chart value %s, which charts/nginx-operator/values.yaml does not have", d.where(line), how, key)
		}
	}
	checked := 0
	for _, d := range documents(t) {
		for _, s := range commandSpans(d) {
			for _, m := range setRE.FindAllStringSubmatch(s.text, -1) {
				checked++
				check(d, s.line, m[1], "--set")
			}
		}
		for _, s := range d.spans {
			m := valueKeyRE.FindStringSubmatch(s.text)
			if s.fenced || m == nil {
				continue
			}
			top, _, _ := strings.Cut(m[1], ".")
			line := strings.ToLower(d.lines[s.line-1])
			if _, ok := values[top]; !ok || !(strings.Contains(line, "helm") || strings.Contains(line, "chart") || strings.Contains(line, "value")) {
				continue
			}
			checked++
			check(d, s.line, m[1], "`"+s.text+"`")
		}
	}
	// The values table: `a.b`, `.c` (a.c) and `*.d` (d of each key the row's last cell names).
	rows := 0
	d := docByPath(t, "docs/operations.md")
	inTable := false
	for n, line := range d.lines {
		if valueTableRE.MatchString(line) {
			inTable = true
			continue
		}
		if !inTable || !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if strings.Trim(cells[0], " -") == "" {
			continue
		}
		rows++
		var parent string
		var each []string
		for _, m := range valueNameRE.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			each = append(each, m[1])
		}
		for _, m := range valueNameRE.FindAllStringSubmatch(cells[0], -1) {
			key := m[1]
			switch {
			case strings.HasPrefix(key, "*."):
				if len(each) == 0 {
					t.Errorf("%s: %s: the row names no keys for *", d.where(n+1), key)
				}
				for _, e := range each {
					checked++
					check(d, n+1, e+key[1:], "the values table ("+key+")")
				}
				continue
			case strings.HasPrefix(key, "."):
				key = parent + key
			default:
				if i := strings.LastIndex(key, "."); i >= 0 {
					parent = key[:i]
				} else {
					parent = key
				}
			}
			checked++
			check(d, n+1, key, "the values table")
		}
	}
	if rows < 10 {
		t.Errorf("found only %d rows of the values table in docs/operations.md", rows)
	}
	t.Logf("%d chart values checked", checked)
}

// TestValuesTableCoversTheChart: every value of values.yaml is in the table of
// docs/operations.md, down to the level the table describes (a map such as resources or
// nodeSelector counts as one value).
func TestValuesTableCoversTheChart(t *testing.T) {
	d := docByPath(t, "docs/operations.md")
	var table strings.Builder
	in := false
	for _, line := range d.lines {
		if valueTableRE.MatchString(line) {
			in = true
		} else if in && !strings.HasPrefix(line, "|") {
			break
		}
		if in {
			table.WriteString(line + "\n")
		}
	}
	named := map[string]bool{}
	for _, line := range strings.Split(table.String(), "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		parent := ""
		var each []string
		for _, m := range valueNameRE.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			each = append(each, m[1])
		}
		for _, m := range valueNameRE.FindAllStringSubmatch(cells[0], -1) {
			key := m[1]
			switch {
			case strings.HasPrefix(key, "*."):
				for _, e := range each {
					named[e+key[1:]] = true
				}
				continue
			case strings.HasPrefix(key, "."):
				key = parent + key
			default:
				parent = key
				if i := strings.LastIndex(key, "."); i >= 0 {
					parent = key[:i]
				}
			}
			named[key] = true
		}
	}
	var walk func(prefix string, node any)
	walk = func(prefix string, node any) {
		for p := prefix; p != ""; {
			if named[p] {
				return
			}
			i := strings.LastIndex(p, ".")
			if i < 0 {
				break
			}
			p = p[:i]
		}
		m, ok := node.(map[string]any)
		if !ok || len(m) == 0 {
			t.Errorf("docs/operations.md: the chart value %s (charts/nginx-operator/values.yaml) is not in the values table", prefix)
			return
		}
		for k, v := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			walk(key, v)
		}
	}
	walk("", chartValues(t))
}

// productMetrics are the metric names the product's Go code defines: the first argument of
// prometheus.NewDesc and Namespace_Subsystem_Name of a *Opts literal, with string constants
// resolved.
func productMetrics(t *testing.T) map[string]bool {
	t.Helper()
	dirs := map[string]bool{}
	for _, root := range []string{"cmd", "pkg"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, root), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && e.Name() == "generated" {
				return filepath.SkipDir
			}
			if !e.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if strings.Contains(string(data), "github.com/prometheus/client_golang/prometheus") {
					dirs[filepath.Dir(p)] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fset := token.NewFileSet()
	consts := map[string]string{} // name and package.name
	var files []*ast.File
	for dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	var eval func(e ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		case *ast.BinaryExpr:
			a, ok1 := eval(e.X)
			b, ok2 := eval(e.Y)
			return a + b, ok1 && ok2 && e.Op == token.ADD
		case *ast.Ident:
			s, ok := consts[e.Name]
			return s, ok
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				s, ok := consts[x.Name+"."+e.Sel.Name]
				return s, ok
			}
		case *ast.ParenExpr:
			return eval(e.X)
		}
		return "", false
	}
	// Constants first (two passes resolve constants built from constants).
	for range 2 {
		for _, f := range files {
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					v := spec.(*ast.ValueSpec)
					for i, name := range v.Names {
						if i < len(v.Values) {
							if s, ok := eval(v.Values[i]); ok {
								consts[name.Name] = s
								consts[f.Name.Name+"."+name.Name] = s
							}
						}
					}
				}
			}
		}
	}
	metrics := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewDesc" && len(n.Args) > 0 {
					if s, ok := eval(n.Args[0]); ok {
						metrics[s] = true
					} else {
						t.Errorf("%s: a metric name this test cannot resolve", fset.Position(n.Pos()))
					}
				}
			case *ast.CompositeLit:
				sel, ok := n.Type.(*ast.SelectorExpr)
				if !ok || !strings.HasSuffix(sel.Sel.Name, "Opts") {
					return true
				}
				parts := map[string]string{}
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Namespace" || k.Name == "Subsystem" || k.Name == "Name") {
						if s, ok := eval(kv.Value); ok {
							parts[k.Name] = s
						}
					}
				}
				if parts["Name"] == "" {
					return true
				}
				var name []string
				for _, k := range []string{"Namespace", "Subsystem", "Name"} {
					if parts[k] != "" {
						name = append(name, parts[k])
					}
				}
				metrics[strings.Join(name, "_")] = true
			}
			return true
		})
	}
	return metrics
}

var metricRE = regexp.MustCompile(`\bnginx_[a-z0-9_]*[*]?`)

// TestMetrics: every nginx_* metric a document names is one the product defines (a name
// ending in _ or * stands for the metrics it begins).
func TestMetrics(t *testing.T) {
	metrics := productMetrics(t)
	for _, want := range []string{"nginx_operator_reconciles_total", "nginx_operator_stalled", "nginx_up", "nginx_config_last_reload_successful"} {
		if !metrics[want] {
			t.Fatalf("found no metric %s in the product's code: %v", want, metrics)
		}
	}
	checked := 0
	for _, d := range documents(t) {
		for n, line := range d.lines {
			for _, name := range metricRE.FindAllString(line, -1) {
				checked++
				if prefix, ok := strings.CutSuffix(name, "*"); ok || strings.HasSuffix(name, "_") {
					prefix = strings.TrimSuffix(prefix, "*")
					if !slices.ContainsFunc(sortedMetricNames(metrics), func(m string) bool { return strings.HasPrefix(m, prefix) }) {
						t.Errorf("%s: no metric of the product begins with %s", d.where(n+1), prefix)
					}
					continue
				}
				if !metrics[name] {
					t.Errorf("%s: the product defines no metric %s (it has %s)", d.where(n+1), name, strings.Join(sortedMetricNames(metrics), ", "))
				}
			}
		}
	}
	t.Logf("%d metric names checked against %d metrics", checked, len(metrics))
}

func sortedMetricNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

const rulesFile = "artifacts/overlays/components/prometheus/rules/nginx-operator.rules.yaml"

// alerts are the alert names of the PrometheusRule's source.
func alerts(t *testing.T) map[string]bool {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, rulesFile)), &rules); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out[r.Alert] = true
			}
		}
	}
	return out
}

var nginxNameRE = regexp.MustCompile(`\bNginx[A-Z][A-Za-z]*\b`)

// TestAlerts: every Nginx... name a document uses is an alert of the PrometheusRule or a name
// in the product's Go code (a kind, a type, an admission plugin); every heading of
// docs/operations.md's "Monitoring" that names one (a runbook) names an alert.
func TestAlerts(t *testing.T) {
	alerts := alerts(t)
	if len(alerts) < 10 {
		t.Fatalf("found only %d alerts in %s", len(alerts), rulesFile)
	}
	goNames := map[string]bool{}
	for _, root := range []string{"cmd", "pkg"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, root), func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := os.ReadFile(p)
			for _, n := range nginxNameRE.FindAllString(string(data), -1) {
				goNames[n] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	checked := 0
	for _, d := range documents(t) {
		for n, line := range d.lines {
			for _, name := range nginxNameRE.FindAllString(line, -1) {
				if name == "NginxOperators" {
					continue
				}
				checked++
				if strings.HasPrefix(line, "#") && d.path == "docs/operations.md" && !alerts[name] {
					t.Errorf("%s: the runbook heading %s names no alert of %s", d.where(n+1), name, rulesFile)
				} else if !alerts[name] && !goNames[name] {
					t.Errorf("%s: %s is neither an alert of %s nor a name in the product's code", d.where(n+1), name, rulesFile)
				}
			}
		}
	}
	t.Logf("%d names checked against %d alerts", checked, len(alerts))
}

var (
	goCommandRE = regexp.MustCompile(`(?:^|[\s;&|(])(?:cd\s+(\S+)\s*&&\s*)?go\s+(?:-C\s+(\S+)\s+)?(run|test|build|install|vet|list|generate)\b([^;&|#]*)`)
	cdRE        = regexp.MustCompile(`(?:^|[\s;&|(])cd\s+([^\s;&|]+)\s*&&`)
)

// moduleOf is the directory of the go.mod that holds dir, relative to the repository root.
func moduleOf(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, "go.mod")) {
			return filepath.ToSlash(d)
		}
		if d == "." || d == "/" {
			return ""
		}
	}
}

// TestGoCommands: a `go run|test|build|install|vet ./path` works from where the document
// runs it (the repository root, `cd dir &&` or `go -C dir`): the package is in the module of
// that directory, not in one of the repository's other modules, where go refuses it.
func TestGoCommands(t *testing.T) {
	checked := 0
	for _, d := range documents(t) {
		for _, s := range commandSpans(d) {
			text := withoutComment(s.text)
			for _, m := range goCommandRE.FindAllStringSubmatch(text, -1) {
				dir := "."
				if c := cdRE.FindAllStringSubmatch(text, -1); c != nil {
					dir = c[len(c)-1][1]
				}
				if m[1] != "" {
					dir = m[1]
				}
				if m[2] != "" {
					dir = filepath.Join(dir, m[2])
				}
				if !exists(dir) {
					t.Errorf("%s: `%s`: the directory %s does not exist", d.where(s.line), strings.TrimSpace(m[0]), dir)
					continue
				}
				module := moduleOf(dir)
				for _, arg := range strings.Fields(m[4]) {
					arg = strings.Trim(arg, `'"`)
					if arg != "." && !strings.HasPrefix(arg, "./") {
						continue
					}
					checked++
					pkg := filepath.Join(dir, strings.TrimSuffix(strings.TrimSuffix(arg, "..."), "/"))
					if !exists(pkg) {
						t.Errorf("%s: `%s`: %s does not exist", d.where(s.line), strings.TrimSpace(m[0]), pkg)
						continue
					}
					if got := moduleOf(pkg); got != module {
						t.Errorf("%s: `%s` fails from %s: %s is in the module %s, not in %s (run it as `go -C %s %s ./%s`)",
							d.where(s.line), strings.TrimSpace(m[0]), where(dir), arg, moduleName(got), moduleName(module), got, m[3], relOrDot(got, pkg))
					}
				}
			}
		}
	}
	t.Logf("%d Go commands checked", checked)
}

func relOrDot(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

func moduleName(dir string) string {
	if dir == "." {
		return "the root module"
	}
	return dir + "/"
}

func where(dir string) string {
	if dir == "." {
		return "the repository root"
	}
	return dir
}

var (
	testNameRE = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*`)
	testFuncRE = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
	goFlagRE   = regexp.MustCompile(`\s-(?:run|bench|fuzz)[ =]['"]?\^?([A-Za-z][A-Za-z0-9_]*)\$?['"]?`)
)

// TestTestNames: every test, benchmark or fuzz target a document names (TestEtcdSizing,
// -run TestStorageVersionMigration, -bench WireFormats) is a function of a _test.go file.
func TestTestNames(t *testing.T) {
	var funcs []string
	err := filepath.WalkDir(repoRoot, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == ".git" || e.Name() == "bin" || e.Name() == "_output" || e.Name() == ".local") {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(p, "_test.go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range testFuncRE.FindAllStringSubmatch(string(data), -1) {
				funcs = append(funcs, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	exact := map[string]bool{}
	for _, f := range funcs {
		exact[f] = true
	}
	checked := 0
	for _, d := range documents(t) {
		for n, line := range d.lines {
			for _, loc := range testNameRE.FindAllStringIndex(line, -1) {
				name := line[loc[0]:loc[1]]
				checked++
				// A -run pattern matches by prefix: the check of commands below judges it.
				if before := strings.TrimRight(line[:loc[0]], "'\"^= "); strings.HasSuffix(before, "-run") || strings.HasSuffix(before, "-bench") || strings.HasSuffix(before, "-fuzz") {
					continue
				}
				if !exact[name] {
					t.Errorf("%s: no _test.go of the repository has a func %s", d.where(n+1), name)
				}
			}
		}
		// -run, -bench and -fuzz patterns: some function's name contains them.
		for _, c := range commandSpans(d) {
			for _, m := range goFlagRE.FindAllStringSubmatch(c.text, -1) {
				checked++
				if !slices.ContainsFunc(funcs, func(f string) bool { return strings.Contains(f, m[1]) }) {
					t.Errorf("%s: `%s` matches no test, benchmark or fuzz function of the repository", d.where(c.line), strings.TrimSpace(m[0]))
				}
			}
		}
	}
	if len(exact) < 100 || checked < 20 {
		t.Errorf("found %d test functions and %d names in the documents", len(exact), checked)
	}
	t.Logf("%d test names checked against %d functions", checked, len(exact))
}
