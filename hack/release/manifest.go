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
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

// manifest is release.json: what a release is and holds, for people and for
// verify-release, which checks every other file against it.
type manifest struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	TreeState  string `json:"treeState"`  // clean, or dirty: built with uncommitted changes
	SourceDate string `json:"sourceDate"` // the commit's time, which dates images and SBOMs
	Registry   string `json:"registry"`   // the prefix of every image reference
	// ThrowawayKey: signed with a key pair generated for this release (no KEY was given);
	// its private half is in the release.
	ThrowawayKey bool          `json:"throwawayKey"`
	PublicKey    string        `json:"publicKey"`
	Images       []imageRecord `json:"images"`
	Chart        chartRecord   `json:"chart"`
	Bundle       string        `json:"bundle"`  // the OLM bundle directory
	Install      string        `json:"install"` // kustomize's rendering of artifacts/deploy
	// Files is every file of the release but release.json, SHA256SUMS and its signature.
	Files []string `json:"files"`
}

// imageRecord is one image of the release, as an OCI image index.
type imageRecord struct {
	Name       string           `json:"name"`
	Repository string           `json:"repository"`
	Tag        string           `json:"tag"`
	Digest     string           `json:"digest"` // of the image index
	Layout     string           `json:"layout"` // OCI image layout directory
	SBOM       string           `json:"sbom"`
	Signature  signatureRecord  `json:"signature"`
	Platforms  []platformRecord `json:"platforms"`
}

// signatureRecord is a cosign signature of an image made before any registry has the
// image: the simple-signing payload cosign signs, and the signature of it, which
// `cosign attach signature --payload P --signature S REF@DIGEST` attaches once it is pushed.
type signatureRecord struct {
	Payload   string `json:"payload"`
	Signature string `json:"signature"`
}

type platformRecord struct {
	Platform string `json:"platform"`
	Digest   string `json:"digest"` // of the image manifest
	// Compressed: manifest, config and layers as a registry stores them; uncompressed: the
	// layers' tar streams.
	CompressedSize   int64          `json:"compressedSize"`
	UncompressedSize int64          `json:"uncompressedSize"`
	Binaries         []binaryRecord `json:"binaries"`
	DebianPackages   int            `json:"debianPackages"`
}

type binaryRecord struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	GoVersion  string `json:"goVersion"`
	MainModule string `json:"mainModule"`
	Modules    int    `json:"modules"`
}

type chartRecord struct {
	File       string `json:"file"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
}

func platformRecordOf(img platformImage, c *contents) platformRecord {
	r := platformRecord{
		Platform: img.platform, Digest: img.descriptor.Digest.String(),
		CompressedSize: c.compressed, UncompressedSize: c.uncompressed, DebianPackages: len(c.debs),
	}
	for _, b := range c.binaries {
		r.Binaries = append(r.Binaries, binaryRecord{
			Path: b.path, Size: b.size, GoVersion: b.info.GoVersion, MainModule: b.info.Main.Path, Modules: len(b.info.Deps),
		})
	}
	return r
}

func writeJSON(file string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// writeSizeReport writes images.txt: per image and platform the sizes a pull transfers
// and unpacks, and the size of each Go binary, so that growth shows between releases.
func writeSizeReport(w io.Writer, m *manifest) error {
	// Put together in memory, where no write fails (the tabwriters' included), and then
	// written in one go.
	var report bytes.Buffer
	fmt.Fprintf(&report, "nginx-operator %s: images (%s/...) per platform, then their Go binaries.\n", m.Version, m.Registry)
	fmt.Fprintf(&report, "Sizes in MiB (1048576 bytes); release.json has them in bytes.\n\n")
	tw := tabwriter.NewWriter(&report, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintf(tw, "IMAGE\tPLATFORM\tCOMPRESSED\tUNCOMPRESSED\tMANIFEST\n")
	for _, img := range m.Images {
		for _, p := range img.Platforms {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", img.Name, p.Platform, size(p.CompressedSize), size(p.UncompressedSize), p.Digest)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(&report)
	tw = tabwriter.NewWriter(&report, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintf(tw, "IMAGE\tPLATFORM\tBINARY\tSIZE\tGO\tMAIN MODULE\tMODULES\n")
	for _, img := range m.Images {
		for _, p := range img.Platforms {
			for _, b := range p.Binaries {
				_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", img.Name, p.Platform, b.Path, size(b.Size), b.GoVersion, b.MainModule, b.Modules)
			}
		}
	}
	_ = tw.Flush()
	_, err := w.Write(report.Bytes())
	return err
}

func size(n int64) string {
	return fmt.Sprintf("%6.1f MiB", float64(n)/(1<<20))
}
