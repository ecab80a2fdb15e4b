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
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// testLayout writes an OCI layout with an index of two platforms' images, as buildah
// writes them: a layer with a Go binary (this test's) and one that hides a second copy
// of it and adds a dpkg status file.
func testLayout(t *testing.T) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	binary, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	blob := func(mediaType string, data []byte) ocispec.Descriptor {
		d := digest.FromBytes(data)
		file := filepath.Join(dir, "blobs", "sha256", d.Encoded())
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(data))}
	}
	jsonBlob := func(mediaType string, v any) ocispec.Descriptor {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return blob(mediaType, data)
	}
	layer := func(files map[string][]byte) ocispec.Descriptor {
		var buf bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		tw := tar.NewWriter(gz)
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(files[name]); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		return blob(ocispec.MediaTypeImageLayerGzip, buf.Bytes())
	}
	layers := []ocispec.Descriptor{
		layer(map[string][]byte{"./usr/local/bin/tool": binary, "./usr/local/bin/gone": binary}),
		layer(map[string][]byte{
			"usr/local/bin/.wh.gone":       nil,
			"var/lib/dpkg/status.d/zlib1g": []byte("Package: zlib1g\nVersion: 1:1.2.13\nArchitecture: amd64\n"),
		}),
	}
	var manifests []ocispec.Descriptor
	for _, arch := range []string{"arm64", "amd64"} {
		config := jsonBlob(ocispec.MediaTypeImageConfig, ocispec.Image{Platform: ocispec.Platform{OS: "linux", Architecture: arch}})
		m := jsonBlob(ocispec.MediaTypeImageManifest, ocispec.Manifest{
			Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: config, Layers: layers,
		})
		m.Platform = &ocispec.Platform{OS: "linux", Architecture: arch}
		manifests = append(manifests, m)
	}
	index := jsonBlob(ocispec.MediaTypeImageIndex, ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex, Manifests: manifests,
	})
	index.Annotations = map[string]string{ocispec.AnnotationRefName: "localhost/test:v1"}
	top, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, Manifests: []ocispec.Descriptor{index}})
	if err := os.WriteFile(filepath.Join(dir, "index.json"), top, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion": "1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, binary
}

func TestLayoutContentsAndSBOM(t *testing.T) {
	dir, binary := testLayout(t)
	l, err := openLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.platforms(); !slices.Equal(got, requiredPlatforms) {
		t.Errorf("platforms %v, want %v", got, requiredPlatforms)
	}
	if err := l.setRefName("v1"); err != nil {
		t.Fatal(err)
	}
	if l, err = openLayout(dir); err != nil || l.index.Annotations[ocispec.AnnotationRefName] != "v1" {
		t.Fatalf("after setRefName: %v, annotations %v", err, l.index.Annotations)
	}

	img := imageRecord{Name: "test", Repository: "example.com/test", Tag: "v1", Digest: l.index.Digest.String(), SBOM: "test.spdx.json"}
	var platforms []platformContents
	for _, pi := range l.images {
		c, err := readContents(l, pi)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.binaries) != 1 || c.binaries[0].path != "/usr/local/bin/tool" || c.binaries[0].size != int64(len(binary)) {
			t.Errorf("%s: binaries %+v, want /usr/local/bin/tool only (gone is whited out)", pi.platform, c.binaries)
		}
		if len(c.debs) != 1 || c.debs[0].name != "zlib1g" {
			t.Errorf("%s: Debian packages %+v, want zlib1g", pi.platform, c.debs)
		}
		if c.uncompressed < 2*int64(len(binary)) || c.compressed <= 0 {
			t.Errorf("%s: sizes %d compressed, %d uncompressed", pi.platform, c.compressed, c.uncompressed)
		}
		platforms = append(platforms, platformContents{image: pi, contents: c})
	}

	var sbom bytes.Buffer
	if err := writeSBOM(&sbom, img, platforms, "2026-01-02T15:04:05Z"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"spdxVersion": "SPDX-2.3"`, "pkg:golang/stdlib@go", "pkg:deb/debian/zlib1g@1:1.2.13?arch=amd64", l.index.Digest.Encoded()} {
		if !strings.Contains(sbom.String(), want) {
			t.Errorf("the SBOM has no %q", want)
		}
	}
	release := t.TempDir()
	if err := os.WriteFile(filepath.Join(release, img.SBOM), sbom.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	v := &verifier{dir: release}
	v.checkSBOM(img, l)
	if len(v.problems) > 0 {
		t.Errorf("the SBOM does not check: %q", v.problems)
	}
	other := *l
	other.index.Digest = digest.FromString("another image")
	v.checkSBOM(img, &other)
	if len(v.problems) != 2 {
		t.Errorf("the SBOM checked for an index it does not describe: %q, want its name and its package wrong", v.problems)
	}
}

func TestLayoutDamage(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, dir string){
		"a changed blob": func(t *testing.T, dir string) {
			l, _ := openLayout(dir)
			file := l.blobPath(l.images[0].manifest.Layers[0].Digest)
			data, _ := os.ReadFile(file)
			data[len(data)/2] ^= 1
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"an extra blob": func(t *testing.T, dir string) {
			d := digest.FromString("extra")
			if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", d.Encoded()), []byte("extra"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"a missing manifest": func(t *testing.T, dir string) {
			l, _ := openLayout(dir)
			if err := os.Remove(l.blobPath(l.images[1].descriptor.Digest)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, _ := testLayout(t)
			damage(t, dir)
			if _, err := openLayout(dir); err == nil {
				t.Error("the layout opened")
			} else {
				t.Log(err)
			}
		})
	}
}
