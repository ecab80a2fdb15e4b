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
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"go.yaml.in/yaml/v3"
)

// requiredPlatforms are the platforms every image of a release is built for.
var requiredPlatforms = []string{"linux/amd64", "linux/arm64"}

// verifier checks a release directory offline and collects every problem, so that one
// run names all that is wrong with a release.
type verifier struct {
	dir       string
	publicKey string // cosign public key the signatures must verify with
	cosign    string
	m         manifest
	digests   map[string]imageRecord
	problems  []string
}

func (v *verifier) fail(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// verifyRelease returns the problems found in the release at dir; an error only when
// it could not be checked at all.
func verifyRelease(dir, publicKey, cosign string) ([]string, error) {
	v := &verifier{dir: dir, publicKey: publicKey, cosign: cosign, digests: map[string]imageRecord{}}
	if v.publicKey == "" {
		v.publicKey = filepath.Join(dir, "cosign.pub")
	}
	problems, err := checkSums(dir)
	if err != nil {
		return nil, err
	}
	v.problems = problems
	v.verifyBlob(sumsFile, sumsSignature)
	if err := readJSONFile(filepath.Join(dir, "release.json"), &v.m); err != nil {
		return nil, err
	}
	v.checkFileList()
	for _, img := range v.m.Images {
		v.digests[img.Digest] = img
	}
	for _, img := range v.m.Images {
		v.checkImage(img)
	}
	v.checkInstall()
	v.checkBundle()
	v.checkChart()
	return v.problems, nil
}

// checkFileList compares release.json's list of files with the directory.
func (v *verifier) checkFileList() {
	files, err := releaseFiles(v.dir, "release.json", sumsFile, sumsSignature)
	if err != nil {
		v.fail("listing the release: %v", err)
		return
	}
	for _, f := range files {
		if !slices.Contains(v.m.Files, f) {
			v.fail("%s: in the release but not in release.json's files", f)
		}
	}
	for _, f := range v.m.Files {
		if !slices.Contains(files, f) {
			v.fail("%s: in release.json's files but missing", f)
		}
	}
}

// checkImage checks an image's layout against release.json, its SBOM and its signature.
func (v *verifier) checkImage(img imageRecord) {
	if !strings.HasPrefix(img.Repository, v.m.Registry+"/") {
		v.fail("image %s: repository %s is not in the release's registry %s", img.Name, img.Repository, v.m.Registry)
	}
	l, err := openLayout(filepath.Join(v.dir, img.Layout))
	if err != nil {
		v.fail("image %s: %v", img.Name, err)
		return
	}
	if got := l.index.Digest.String(); got != img.Digest {
		v.fail("image %s: the layout's index is %s, release.json says %s", img.Name, got, img.Digest)
	}
	if got := l.platforms(); !slices.Equal(got, requiredPlatforms) {
		v.fail("image %s: the index has platforms %v, want %v", img.Name, got, requiredPlatforms)
	}
	for _, p := range img.Platforms {
		i := slices.IndexFunc(l.images, func(pi platformImage) bool { return pi.platform == p.Platform })
		if i < 0 || l.images[i].descriptor.Digest.String() != p.Digest {
			v.fail("image %s: release.json's %s manifest %s is not in the index", img.Name, p.Platform, p.Digest)
		}
	}
	v.checkSBOM(img, l)
	v.checkPayload(img)
	v.verifyBlob(img.Signature.Payload, img.Signature.Signature)
}

// checkSBOM checks that the image's SPDX document parses and describes the index and
// each of its platforms' images by digest.
func (v *verifier) checkSBOM(img imageRecord, l *layout) {
	f, err := os.Open(filepath.Join(v.dir, img.SBOM))
	if err != nil {
		v.fail("image %s: SBOM: %v", img.Name, err)
		return
	}
	defer func() { _ = f.Close() }() // read only
	doc, err := spdxjson.Read(f)
	if err != nil {
		v.fail("image %s: SBOM %s does not parse as SPDX JSON: %v", img.Name, img.SBOM, err)
		return
	}
	if doc.SPDXVersion != spdx.Version {
		v.fail("image %s: SBOM %s is %s, want %s", img.Name, img.SBOM, doc.SPDXVersion, spdx.Version)
	}
	if want := img.Repository + "@" + l.index.Digest.String(); doc.DocumentName != want {
		v.fail("image %s: SBOM %s is named %s, want %s", img.Name, img.SBOM, doc.DocumentName, want)
	}
	packages := map[string]*spdx.Package{}
	for _, p := range doc.Packages {
		packages[string(p.PackageSPDXIdentifier)] = p
	}
	described := false
	for _, r := range doc.Relationships {
		if r.Relationship == "DESCRIBES" && r.RefA.ElementRefID == "DOCUMENT" {
			if p := packages[string(r.RefB.ElementRefID)]; p != nil && hasSHA256(p, l.index.Digest.Encoded()) {
				described = true
			}
		}
	}
	if !described {
		v.fail("image %s: SBOM %s does not describe the image index %s", img.Name, img.SBOM, l.index.Digest)
	}
	for _, pi := range l.images {
		if !slices.ContainsFunc(doc.Packages, func(p *spdx.Package) bool { return hasSHA256(p, pi.descriptor.Digest.Encoded()) }) {
			v.fail("image %s: SBOM %s has no package for the %s image %s", img.Name, img.SBOM, pi.platform, pi.descriptor.Digest)
		}
	}
}

func hasSHA256(p *spdx.Package, hex string) bool {
	return slices.ContainsFunc(p.PackageChecksums, func(c spdx.Checksum) bool { return c.Algorithm == spdx.SHA256 && c.Value == hex })
}

// checkPayload checks that an image's signed payload is cosign's simple-signing payload
// for this image's digest: a good signature of another digest would vouch for nothing.
func (v *verifier) checkPayload(img imageRecord) {
	var payload struct {
		Critical struct {
			Identity struct {
				DockerReference string `json:"docker-reference"`
			} `json:"identity"`
			Image struct {
				DockerManifestDigest string `json:"docker-manifest-digest"`
			} `json:"image"`
			Type string `json:"type"`
		} `json:"critical"`
	}
	if err := readJSONFile(filepath.Join(v.dir, img.Signature.Payload), &payload); err != nil {
		v.fail("image %s: signature payload: %v", img.Name, err)
		return
	}
	c := payload.Critical
	if c.Type != "cosign container image signature" || c.Image.DockerManifestDigest != img.Digest || c.Identity.DockerReference != img.Repository {
		v.fail("image %s: %s signs %s (%s, %q), want %s@%s", img.Name, img.Signature.Payload,
			c.Identity.DockerReference, c.Image.DockerManifestDigest, c.Type, img.Repository, img.Digest)
	}
}

// verifyBlob verifies a cosign signature of a file of the release with the public key,
// offline (no transparency log).
func (v *verifier) verifyBlob(file, signature string) {
	cmd := exec.Command(v.cosign, "verify-blob", "--key", v.publicKey, "--signature", filepath.Join(v.dir, signature),
		"--insecure-ignore-tlog", filepath.Join(v.dir, file))
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		v.fail("%s: the signature %s does not verify with %s: %v: %s", file, signature, v.publicKey, err, lines[len(lines)-1])
	}
}

// checkRefs checks image references found in source: each by the digest of an image
// of the release, in that image's repository, with no tag unless tagsAllowed (then the
// image's own); and every image named in required referenced.
func (v *verifier) checkRefs(source string, refs []string, tagsAllowed bool, required ...string) {
	seen := map[string]bool{}
	for _, ref := range refs {
		r := parseImageRef(ref)
		img, ok := v.digests[r.digest]
		switch {
		case r.digest == "":
			v.fail("%s: image %s is not referenced by digest", source, ref)
		case !ok:
			v.fail("%s: image %s: %s is the digest of no image of the release", source, ref, r.digest)
		case r.repository != img.Repository:
			v.fail("%s: image %s: the digest is %s's, whose repository is %s", source, ref, img.Name, img.Repository)
		case r.tag != "" && (!tagsAllowed || r.tag != img.Tag):
			v.fail("%s: image %s: want %s@%s", source, ref, img.Repository, img.Digest)
		default:
			seen[img.Name] = true
		}
	}
	for _, name := range required {
		if !seen[name] {
			v.fail("%s references no %s image of the release", source, name)
		}
	}
}

// checkInstall checks install.yaml: every image by digest only.
func (v *verifier) checkInstall() {
	data, err := os.ReadFile(filepath.Join(v.dir, v.m.Install))
	if err != nil {
		v.fail("install manifest: %v", err)
		return
	}
	refs, err := manifestImages(data)
	if err != nil {
		v.fail("%s: %v", v.m.Install, err)
		return
	}
	v.checkRefs(v.m.Install, refs, false, v.imageNames()...)
}

// checkBundle checks the OLM bundle's ClusterServiceVersion: the release's version, and
// the operator's and the exporter's images by digest (etcd is installed before the
// bundle, not by it).
func (v *verifier) checkBundle() {
	files, _ := filepath.Glob(filepath.Join(v.dir, v.m.Bundle, "manifests", "*.clusterserviceversion.yaml"))
	if len(files) != 1 {
		v.fail("%s: want one ClusterServiceVersion in manifests/, found %d", v.m.Bundle, len(files))
		return
	}
	rel, _ := filepath.Rel(v.dir, files[0])
	data, err := os.ReadFile(files[0])
	if err != nil {
		v.fail("%s: %v", rel, err)
		return
	}
	var csv struct {
		Metadata struct{ Name string }
		Spec     struct{ Version string }
	}
	if err := yaml.Unmarshal(data, &csv); err != nil {
		v.fail("%s: %v", rel, err)
		return
	}
	if want := strings.TrimPrefix(v.m.Version, "v"); csv.Spec.Version != want || !strings.HasSuffix(csv.Metadata.Name, ".v"+want) {
		v.fail("%s: version %s (%s), want %s", rel, csv.Spec.Version, csv.Metadata.Name, want)
	}
	refs, err := manifestImages(data)
	if err != nil {
		v.fail("%s: %v", rel, err)
		return
	}
	v.checkRefs(rel, refs, false, "nginx-operator", "nginx-exporter")
}

// checkChart checks the packaged chart: its version and appVersion, and every image its
// values make pinned by digest (the tag stays, for people; the digest decides).
func (v *verifier) checkChart() {
	files, err := readChart(filepath.Join(v.dir, v.m.Chart.File))
	if err != nil {
		v.fail("chart %s: %v", v.m.Chart.File, err)
		return
	}
	var chart struct {
		Name, Version string
		AppVersion    string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal(files["Chart.yaml"], &chart); err != nil {
		v.fail("chart %s: Chart.yaml: %v", v.m.Chart.File, err)
	}
	if chart.Version != strings.TrimPrefix(v.m.Version, "v") || chart.AppVersion != v.m.Version {
		v.fail("chart %s: version %q, appVersion %q, want %s and %s", v.m.Chart.File, chart.Version, chart.AppVersion, strings.TrimPrefix(v.m.Version, "v"), v.m.Version)
	}
	refs, err := chartImages(files["values.yaml"])
	if err != nil {
		v.fail("chart %s: values.yaml: %v", v.m.Chart.File, err)
		return
	}
	v.checkRefs(v.m.Chart.File+" values.yaml", refs, true, v.imageNames()...)
}

func (v *verifier) imageNames() []string {
	var names []string
	for _, img := range v.m.Images {
		names = append(names, img.Name)
	}
	return names
}

// readChart returns the files of a packaged chart's top directory by name.
func readChart(file string) (map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		// <chart>/<file>: only the chart's own files, not its templates or subcharts.
		if dir, name := path.Split(hdr.Name); strings.Count(dir, "/") == 1 && hdr.Typeflag == tar.TypeReg {
			if files[name], err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
	}
	for _, name := range []string{"Chart.yaml", "values.yaml"} {
		if files[name] == nil {
			return nil, fmt.Errorf("no %s", name)
		}
	}
	return files, nil
}
