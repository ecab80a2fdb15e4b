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
	"fmt"
	"io"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdx/v2/common"
)

// sbomNamespace prefixes each SBOM's documentNamespace, which SPDX wants unique per
// document: the image's digest makes it so.
const sbomNamespace = "https://github.com/example/nginx-operator/sbom/"

// platformContents is one platform's image of an index with what it holds.
type platformContents struct {
	image    platformImage
	contents *contents
}

// writeSBOM writes an SPDX 2.3 JSON document that describes the image index img and,
// for each platform, the image, its Go binaries with the modules and Go release they were
// built from, and its Debian packages. created is the release's source date, so that the
// same inputs give the same document.
func writeSBOM(w io.Writer, img imageRecord, platforms []platformContents, created string) error {
	doc := &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      img.Repository + "@" + img.Digest,
		DocumentNamespace: sbomNamespace + img.Name + "-" + strings.TrimPrefix(img.Digest, "sha256:"),
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "nginx-operator-release"}, {CreatorType: "Organization", Creator: "The nginx-operator Authors"}},
			Created:  created,
		},
	}
	s := &sbom{doc: doc, tag: img.Tag, ids: map[common.ElementID]bool{}, relations: map[spdx.Relationship]bool{}}
	root := s.addPackage(&spdx.Package{
		PackageSPDXIdentifier: common.ElementID(spdxID("Image-" + img.Name)),
		PackageName:           img.Name,
		PackageVersion:        img.Tag,
		PrimaryPackagePurpose: "CONTAINER",
		PackageChecksums:      sha256Checksum(img.Digest),
		PackageComment:        "OCI image index " + img.Digest + " of " + img.Repository + ":" + img.Tag,
	}, ociPURL(img, "", img.Digest))
	s.relate(common.MakeDocElementID("", "DOCUMENT"), root, common.TypeRelationshipDescribe)
	for _, p := range platforms {
		arch := p.image.platform[strings.Index(p.image.platform, "/")+1:]
		platformID := s.addPackage(&spdx.Package{
			PackageSPDXIdentifier: common.ElementID(spdxID("Image-" + img.Name + "-" + p.image.platform)),
			PackageName:           img.Name + " " + p.image.platform,
			PackageVersion:        img.Tag,
			PrimaryPackagePurpose: "CONTAINER",
			PackageChecksums:      sha256Checksum(p.image.descriptor.Digest.String()),
			PackageComment:        "image manifest " + p.image.descriptor.Digest.String() + " for " + p.image.platform,
		}, ociPURL(img, arch, p.image.descriptor.Digest.String()))
		s.relate(root, platformID, common.TypeRelationshipContains)
		for _, b := range p.contents.binaries {
			s.addBinary(platformID, p.image.platform, b)
		}
		for _, d := range p.contents.debs {
			id := s.addPackage(&spdx.Package{
				PackageSPDXIdentifier: common.ElementID(spdxID("Deb-" + d.name + "-" + d.version + "-" + d.architecture)),
				PackageName:           d.name,
				PackageVersion:        d.version,
				PrimaryPackagePurpose: "LIBRARY",
				PackageSourceInfo:     sourceInfo(d.source),
			}, fmt.Sprintf("pkg:deb/debian/%s@%s?arch=%s", url.PathEscape(d.name), url.PathEscape(d.version), d.architecture))
			s.relate(platformID, id, common.TypeRelationshipContains)
		}
	}
	return spdxjson.Write(doc, w, spdxjson.Indent("  "))
}

// sbom builds a document, adding each package (a Go module shared by several binaries,
// for one) once.
type sbom struct {
	doc       *spdx.Document
	tag       string // the image's
	ids       map[common.ElementID]bool
	relations map[spdx.Relationship]bool
}

// addBinary adds a Go binary of a platform's image, and the modules and Go release it
// was built from as packages it depends on.
func (s *sbom) addBinary(platformID common.DocElementID, platform string, b goBinary) {
	main := b.info.Main
	if main.Version == "(devel)" {
		// Built from a checkout, as the release's own binaries are: the checkout is the
		// release's source, whose version the image's tag is.
		main.Version = s.tag
	}
	id := s.addPackage(&spdx.Package{
		PackageSPDXIdentifier: common.ElementID(spdxID("Binary-" + platform + b.path)),
		PackageName:           b.path,
		PackageVersion:        main.Version,
		PackageFileName:       b.path,
		PrimaryPackagePurpose: "APPLICATION",
		PackageChecksums:      []common.Checksum{{Algorithm: common.SHA256, Value: b.sha256}},
		PackageComment:        fmt.Sprintf("Go binary of module %s built with %s for %s", main.Path, b.info.GoVersion, platform),
	}, goPURL(main.Path, main.Version))
	s.relate(platformID, id, common.TypeRelationshipContains)
	stdlib := s.addPackage(&spdx.Package{
		PackageSPDXIdentifier: common.ElementID(spdxID("Go-stdlib-" + b.info.GoVersion)),
		PackageName:           "stdlib",
		PackageVersion:        b.info.GoVersion,
		PrimaryPackagePurpose: "LIBRARY",
	}, goPURL("stdlib", b.info.GoVersion))
	s.relate(id, stdlib, common.TypeRelationshipDependsOn)
	for _, dep := range b.info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		m := s.addPackage(goModulePackage(dep), goPURL(dep.Path, dep.Version))
		s.relate(id, m, common.TypeRelationshipDependsOn)
	}
}

func goModulePackage(m *debug.Module) *spdx.Package {
	p := &spdx.Package{
		PackageSPDXIdentifier: common.ElementID(spdxID("Go-" + m.Path + "-" + m.Version)),
		PackageName:           m.Path,
		PackageVersion:        m.Version,
		PrimaryPackagePurpose: "LIBRARY",
	}
	if m.Sum != "" {
		p.PackageComment = "go.sum " + m.Sum
	}
	return p
}

// addPackage adds p unless a package with its ID is there, and returns its ID.
func (s *sbom) addPackage(p *spdx.Package, purl string) common.DocElementID {
	id := common.MakeDocElementID("", string(p.PackageSPDXIdentifier))
	if s.ids[p.PackageSPDXIdentifier] {
		return id
	}
	s.ids[p.PackageSPDXIdentifier] = true
	p.PackageDownloadLocation = "NOASSERTION"
	p.FilesAnalyzed, p.IsFilesAnalyzedTagPresent = false, true
	p.PackageExternalReferences = []*spdx.PackageExternalReference{{
		Category: common.CategoryPackageManager, RefType: common.TypePackageManagerPURL, Locator: purl,
	}}
	s.doc.Packages = append(s.doc.Packages, p)
	return id
}

func (s *sbom) relate(a, b common.DocElementID, kind string) {
	r := spdx.Relationship{RefA: a, RefB: b, Relationship: kind}
	if !s.relations[r] {
		s.relations[r] = true
		s.doc.Relationships = append(s.doc.Relationships, &r)
	}
}

func sha256Checksum(digest string) []common.Checksum {
	return []common.Checksum{{Algorithm: common.SHA256, Value: strings.TrimPrefix(digest, "sha256:")}}
}

// ociPURL is the package URL of an image (or of one platform's, with arch) by digest.
func ociPURL(img imageRecord, arch, digest string) string {
	q := url.Values{"repository_url": {img.Repository}, "tag": {img.Tag}}
	if arch != "" {
		q.Set("arch", arch)
	}
	return "pkg:oci/" + img.Name + "@" + url.QueryEscape(digest) + "?" + q.Encode()
}

func goPURL(path, version string) string {
	return "pkg:golang/" + path + "@" + url.PathEscape(version)
}

func sourceInfo(source string) string {
	if source == "" {
		return ""
	}
	return "built from the Debian source package " + source
}

var notIDChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// spdxID makes an SPDX element ID (letters, digits, dots and dashes) of s.
func spdxID(s string) string {
	return strings.Trim(notIDChars.ReplaceAllString(s, "-"), "-")
}
