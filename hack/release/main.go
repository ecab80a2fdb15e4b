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

// Command release is the Go half of `make release` and `make verify-release`
// (hack/release.sh and hack/verify-release.sh hold the other): it reads the images' OCI
// layouts, writes their SBOMs, pins the chart's images, writes release.json, images.txt
// and SHA256SUMS, and checks a release offline.
//
//	release image -dir D -layout images/N -name N -repository R -tag T -sbom sbom/N.spdx.json -created DATE -record FILE
//	release chart-values -values FILE -set image.tag=... [-set ...]
//	release manifest -dir D -records A,B -version V ... (writes images.txt and release.json)
//	release sums -dir D
//	release verify -dir D -cosign BIN [-public-key FILE]
//	release show -dir D   (release.json as lines for scripts: registry, chart, one per image)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	commands := map[string]func([]string) error{
		"image": imageCmd, "chart-values": chartValuesCmd, "manifest": manifestCmd, "sums": sumsCmd, "verify": verifyCmd, "show": showCmd,
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		usage()
	}
	if err := cmd(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release image|chart-values|manifest|sums|verify|show [flags] (see -h of each)")
	os.Exit(2)
}

// imageCmd checks an image's layout, names its index by tag, writes its SBOM and prints
// the image's record for release.json.
func imageCmd(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	dir := fs.String("dir", "", "the release directory")
	var img imageRecord
	fs.StringVar(&img.Layout, "layout", "", "the image's OCI layout, relative to -dir")
	fs.StringVar(&img.Name, "name", "", "the image's name in the release (nginx-operator, etcd)")
	fs.StringVar(&img.Repository, "repository", "", "the repository the image is pushed to")
	fs.StringVar(&img.Tag, "tag", "", "the image's tag")
	fs.StringVar(&img.SBOM, "sbom", "", "the SBOM to write, relative to -dir")
	created := fs.String("created", "", "the SBOM's creation time (the release's source date), e.g. 2026-01-02T15:04:05Z")
	record := fs.String("record", "", "where to write the image's record for release.json")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits
	if *dir == "" || img.Layout == "" || img.Name == "" || img.Repository == "" || img.Tag == "" || img.SBOM == "" || *created == "" || *record == "" {
		return fmt.Errorf("-dir, -layout, -name, -repository, -tag, -sbom, -created and -record are required")
	}
	l, err := openLayout(filepath.Join(*dir, img.Layout))
	if err != nil {
		return err
	}
	if got := l.platforms(); !slices.Equal(got, requiredPlatforms) {
		return fmt.Errorf("%s: the index has platforms %v, want %v", img.Layout, got, requiredPlatforms)
	}
	if err := l.setRefName(img.Tag); err != nil {
		return err
	}
	img.Digest = l.index.Digest.String()
	var platforms []platformContents
	for _, pi := range l.images {
		c, err := readContents(l, pi)
		if err != nil {
			return err
		}
		platforms = append(platforms, platformContents{image: pi, contents: c})
		img.Platforms = append(img.Platforms, platformRecordOf(pi, c))
	}
	sbomFile := filepath.Join(*dir, img.SBOM)
	if err := os.MkdirAll(filepath.Dir(sbomFile), 0o755); err != nil {
		return err
	}
	f, err := os.Create(sbomFile)
	if err != nil {
		return err
	}
	if err := writeSBOM(f, img, platforms, *created); err != nil {
		_ = f.Close() // the write's error is the one to report
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	img.Signature = signatureRecord{Payload: "signatures/" + img.Name + ".payload.json", Signature: "signatures/" + img.Name + ".sig"}
	fmt.Println(img.Digest)
	return writeJSON(*record, img)
}

// setFlags collects repeated -set key=value flags.
type setFlags map[string]string

func (s setFlags) String() string { return fmt.Sprint(map[string]string(s)) }
func (s setFlags) Set(v string) error {
	key, value, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q is not key=value", v)
	}
	s[key] = value
	return nil
}

// chartValuesCmd pins values of a chart's values.yaml (a copy of it) in place.
func chartValuesCmd(args []string) error {
	fs := flag.NewFlagSet("chart-values", flag.ExitOnError)
	file := fs.String("values", "", "the values.yaml to change in place")
	sets := setFlags{}
	fs.Var(sets, "set", "path.to.value=value (repeatable)")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits
	data, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	if data, err = setValues(data, sets); err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	return os.WriteFile(*file, data, 0o644)
}

// manifestCmd writes images.txt and then release.json, which lists every file.
func manifestCmd(args []string) error {
	fs := flag.NewFlagSet("manifest", flag.ExitOnError)
	dir := fs.String("dir", "", "the release directory")
	records := fs.String("records", "", "the image records release image wrote, comma-separated, in release order")
	var m manifest
	fs.StringVar(&m.Version, "version", "", "the release's version, vX.Y.Z")
	fs.StringVar(&m.Commit, "commit", "", "the git commit released")
	fs.StringVar(&m.TreeState, "tree-state", "", "clean or dirty")
	fs.StringVar(&m.SourceDate, "source-date", "", "the commit's time")
	fs.StringVar(&m.Registry, "registry", "", "the registry prefix of the images")
	fs.BoolVar(&m.ThrowawayKey, "throwaway-key", false, "signed with a key pair generated for this release")
	fs.StringVar(&m.Chart.File, "chart", "", "the packaged chart, relative to -dir")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits
	m.PublicKey, m.Bundle, m.Install = "cosign.pub", "bundle", "install.yaml"
	m.Chart.Version, m.Chart.AppVersion = strings.TrimPrefix(m.Version, "v"), m.Version
	for _, file := range strings.Split(*records, ",") {
		var img imageRecord
		if err := readJSONFile(file, &img); err != nil {
			return err
		}
		m.Images = append(m.Images, img)
	}
	report, err := os.Create(filepath.Join(*dir, "images.txt"))
	if err != nil {
		return err
	}
	if err := writeSizeReport(report, &m); err != nil {
		_ = report.Close() // the write's error is the one to report
		return err
	}
	if err := report.Close(); err != nil {
		return err
	}
	if m.Files, err = releaseFiles(*dir, "release.json", sumsFile, sumsSignature); err != nil {
		return err
	}
	return writeJSON(filepath.Join(*dir, "release.json"), m)
}

func sumsCmd(args []string) error {
	fs := flag.NewFlagSet("sums", flag.ExitOnError)
	dir := fs.String("dir", "", "the release directory")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits
	return writeSums(*dir)
}

// verifyCmd prints every problem of a release and fails if there is one.
func verifyCmd(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ExitOnError)
	dir := fs.String("dir", "", "the release directory")
	publicKey := fs.String("public-key", "", "the cosign public key the signatures must verify with (default: the release's cosign.pub)")
	cosign := fs.String("cosign", "cosign", "the cosign binary")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits
	problems, err := verifyRelease(*dir, *publicKey, *cosign)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "FAIL "+p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %d problem(s)", *dir, len(problems))
	}
	return nil
}

// showCmd prints release.json for shell scripts (hack/release-push.sh), which have no
// JSON parser: "registry R", "chart FILE NAME VERSION", and per image
// "image NAME REPOSITORY TAG DIGEST LAYOUT PAYLOAD SIGNATURE".
func showCmd(args []string) error {
	fs := flag.NewFlagSet("show", flag.ExitOnError)
	dir := fs.String("dir", "", "the release directory")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits
	var m manifest
	if err := readJSONFile(filepath.Join(*dir, "release.json"), &m); err != nil {
		return err
	}
	fmt.Printf("registry %s\nchart %s %s %s\n", m.Registry, m.Chart.File, strings.TrimSuffix(m.Chart.File, "-"+m.Chart.Version+".tgz"), m.Chart.Version)
	for _, img := range m.Images {
		fmt.Printf("image %s %s %s %s %s %s %s\n", img.Name, img.Repository, img.Tag, img.Digest, img.Layout, img.Signature.Payload, img.Signature.Signature)
	}
	return nil
}
