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

// The install instructions: the overlays they name, the images they move, the
// prerequisites they state, and the commands of the real-node suite.

import (
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// commands are a document's shell commands: each inline code span, and each line of a
// fenced shell block with the lines it continues with a trailing backslash.
func commands(d *document) []codeSpan {
	var out []codeSpan
	for _, b := range d.blocks {
		switch b.lang {
		case "yaml", "json", "go", "text", "promql":
			continue
		}
		for i := 0; i < len(b.lines); i++ {
			c := codeSpan{line: b.start + i, fenced: true, lang: b.lang}
			text := b.lines[i]
			for strings.HasSuffix(strings.TrimSpace(withoutComment(text)), `\`) && i+1 < len(b.lines) {
				text = strings.TrimSuffix(strings.TrimSpace(withoutComment(text)), `\`) + " " + strings.TrimSpace(b.lines[i+1])
				i++
			}
			c.text = strings.TrimSpace(text)
			out = append(out, c)
		}
	}
	for _, s := range d.spans {
		if !s.fenced {
			out = append(out, s)
		}
	}
	return out
}

var (
	overlayBeforeRE = regexp.MustCompile("`((?:components/)?[a-z][a-z0-9-]*)` (?:overlay|component)s?\\b")
	overlayAfterRE  = regexp.MustCompile("\\b(?:overlay|component)s?:? `((?:components/)?[a-z][a-z0-9-]*)`")
	componentRE     = regexp.MustCompile("`(components/[a-z][a-z0-9-]*)`")
)

// TestOverlayNames: an overlay or component a document names by its name ("the
// `single-member-etcd` overlay", "the component `components/etcd-backup`") is a directory of
// artifacts/overlays.
func TestOverlayNames(t *testing.T) {
	checked := 0
	for _, d := range documents(t) {
		for n, line := range d.lines {
			// A line about kustomize's overlays, not another project's components.
			if !strings.Contains(line, "overlay") && !strings.Contains(line, "kustomiz") && !strings.Contains(line, "artifacts/") {
				continue
			}
			var names []string
			for _, re := range []*regexp.Regexp{overlayBeforeRE, overlayAfterRE, componentRE} {
				for _, m := range re.FindAllStringSubmatch(line, -1) {
					names = append(names, m[1])
				}
			}
			for _, name := range names {
				checked++
				if !exists("artifacts/overlays/" + name) {
					t.Errorf("%s: the overlay or component %s is not a directory of artifacts/overlays", d.where(n+1), name)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("found only %d overlay names", checked)
	}
	t.Logf("%d overlay and component names checked", checked)
}

var imageRE = regexp.MustCompile(`(?m)^\s*(?:-\s*)?image:\s*["']?([^\s"'@]+)`)

// placeholderImages are the images artifacts/deploy names under example.com, which exist in
// no registry: every way to install must move them. (registry.k8s.io's etcd is real.)
func placeholderImages(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range []string{"00-namespace.yaml", "20-etcd.yaml", "23-etcd-defrag.yaml", "30-apiserver.yaml", "60-controller.yaml"} {
		for _, m := range imageRE.FindAllStringSubmatch(readRepoFile(t, "artifacts/deploy/"+f), -1) {
			name := m[1]
			if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
				name = name[:i]
			}
			if strings.HasPrefix(name, "example.com/") {
				out[name] = true
			}
		}
	}
	if !out["example.com/nginx-operator"] || !out["example.com/nginx-operator/nginx-exporter"] {
		t.Fatalf("found the placeholder images %v in artifacts/deploy", out)
	}
	return out
}

// TestOwnImagesMoveEveryImage: a kustomization in the documents that sets `images:` over
// artifacts/deploy or one of its overlays moves every image the base names under example.com:
// one left out is pulled from a registry that does not exist (the exporter's, and the
// controller waits in Init:ImagePullBackOff).
func TestOwnImagesMoveEveryImage(t *testing.T) {
	want := placeholderImages(t)
	checked := 0
	for _, d := range documents(t) {
		for _, b := range d.blocks {
			if b.lang != "yaml" {
				continue
			}
			var k struct {
				Resources []string `json:"resources"`
				Images    []struct {
					Name string `json:"name"`
				} `json:"images"`
			}
			if yaml.Unmarshal([]byte(strings.Join(b.lines, "\n")), &k) != nil || len(k.Images) == 0 {
				continue
			}
			overDeploy := false
			for _, r := range k.Resources {
				overDeploy = overDeploy || strings.Contains(r, "artifacts/deploy") || strings.Contains(r, "artifacts/overlays/")
			}
			if !overDeploy {
				continue
			}
			checked++
			moved := map[string]bool{}
			for _, i := range k.Images {
				moved[i.Name] = true
			}
			for name := range want {
				if !moved[name] {
					t.Errorf("%s: the kustomization's images: leaves %s, which no registry has", d.where(b.start), name)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("found no kustomization with images: in the documents")
	}
}

var helmInstallRE = regexp.MustCompile(`\bhelm\s+(?:install|upgrade)\b`)

// TestHelmMovesEveryImage: a `helm install` or `helm upgrade` in the documents that sets
// image.repository (and does not reuse the release's values) sets every repository value
// whose default is under example.com.
func TestHelmMovesEveryImage(t *testing.T) {
	values := chartValues(t)
	var repositories []string
	var walk func(prefix string, node any)
	walk = func(prefix string, node any) {
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		for k, v := range m {
			key := strings.TrimPrefix(prefix+"."+k, ".")
			if s, ok := v.(string); ok && k == "repository" && strings.HasPrefix(s, "example.com/") {
				repositories = append(repositories, key)
			}
			walk(key, v)
		}
	}
	walk("", values)
	if len(repositories) < 2 {
		t.Fatalf("found the placeholder repositories %v in values.yaml", repositories)
	}
	checked := 0
	for _, d := range documents(t) {
		for _, c := range commands(d) {
			text := withoutComment(c.text)
			if !helmInstallRE.MatchString(text) || strings.Contains(text, "--reuse-values") || !strings.Contains(text, "image.repository=") {
				continue
			}
			checked++
			for _, r := range repositories {
				if !strings.Contains(text, r+"=") {
					t.Errorf("%s: `%s` does not set %s, which defaults to a registry that does not exist", d.where(c.line), text, r)
				}
			}
		}
	}
	if checked < 2 {
		t.Errorf("found only %d helm commands that set image.repository", checked)
	}
}

var (
	minKubeRE  = regexp.MustCompile(`(?m)^\s*minKubeVersion:\s*"?(\d+)\.(\d+)`)
	certDaysRE = regexp.MustCompile(`(?m)^(CA_DAYS|CERT_DAYS)=\$\{[A-Z_]+:-(\d+)\}`)
)

// TestInstallPrerequisites: README states the oldest Kubernetes release the bundle's
// minKubeVersion allows, and how long hack/deploy-certs.sh's certificates and CAs are valid.
func TestInstallPrerequisites(t *testing.T) {
	readme := strings.Join(strings.Fields(strings.Join(docByPath(t, "README.md").lines, " ")), " ")
	m := minKubeRE.FindStringSubmatch(readRepoFile(t, "bundle/manifests/nginx-operator.clusterserviceversion.yaml"))
	if m == nil {
		t.Fatal("no minKubeVersion in the bundle's ClusterServiceVersion")
	}
	if want := "Kubernetes " + m[1] + "." + m[2] + " or later"; !strings.Contains(readme, want) {
		t.Errorf("README.md does not say %q (the bundle's minKubeVersion)", want)
	}
	days := certDaysRE.FindAllStringSubmatch(readRepoFile(t, "hack/deploy-certs.sh"), -1)
	if len(days) != 2 {
		t.Fatalf("found %v in hack/deploy-certs.sh, want CA_DAYS and CERT_DAYS", days)
	}
	for _, d := range days {
		if want := d[2] + " days (`" + d[1] + "`)"; !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q (the default of hack/deploy-certs.sh)", want)
		}
	}
}
