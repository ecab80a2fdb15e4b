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
	"path/filepath"
	"slices"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// layout is an OCI image layout directory that holds one image index: the form a release
// ships each image in, which `crane push DIR REF` or `skopeo copy --all oci:DIR REF` push
// as it is, so that the digest signed here is the digest a registry serves.
type layout struct {
	dir    string
	index  ocispec.Descriptor // the image index, as index.json names it
	images []platformImage
}

// platformImage is one platform's image of the index.
type platformImage struct {
	platform   string // os/architecture
	descriptor ocispec.Descriptor
	manifest   ocispec.Manifest
	config     ocispec.Image
}

// openLayout reads the layout at dir and checks it completely: every blob the index
// reaches exists with its size and digest, and the layout holds no other blob (a push
// would leave it behind, so SHA256SUMS would vouch for bytes nobody can pull).
func openLayout(dir string) (*layout, error) {
	var marker ocispec.ImageLayout
	if err := readJSONFile(filepath.Join(dir, ocispec.ImageLayoutFile), &marker); err != nil {
		return nil, err
	}
	if marker.Version != ocispec.ImageLayoutVersion {
		return nil, fmt.Errorf("%s: imageLayoutVersion %q, want %q", dir, marker.Version, ocispec.ImageLayoutVersion)
	}
	var top ocispec.Index
	if err := readJSONFile(filepath.Join(dir, ocispec.ImageIndexFile), &top); err != nil {
		return nil, err
	}
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != ocispec.MediaTypeImageIndex {
		return nil, fmt.Errorf("%s: index.json names %d manifests, want one image index", dir, len(top.Manifests))
	}
	l := &layout{dir: dir, index: top.Manifests[0]}
	used := map[digest.Digest]bool{}
	var index ocispec.Index
	if err := l.readJSONBlob(l.index, &index, used); err != nil {
		return nil, err
	}
	if index.MediaType != ocispec.MediaTypeImageIndex {
		return nil, fmt.Errorf("%s: the index %s has mediaType %q", dir, l.index.Digest, index.MediaType)
	}
	for _, d := range index.Manifests {
		if d.Platform == nil {
			return nil, fmt.Errorf("%s: manifest %s of the index names no platform", dir, d.Digest)
		}
		// os/architecture only: arm64's variant (v8) is the only one there is.
		img := platformImage{platform: d.Platform.OS + "/" + d.Platform.Architecture, descriptor: d}
		if slices.Contains(l.platforms(), img.platform) {
			return nil, fmt.Errorf("%s: the index has two images for %s", dir, img.platform)
		}
		if err := l.readJSONBlob(d, &img.manifest, used); err != nil {
			return nil, err
		}
		if err := l.readJSONBlob(img.manifest.Config, &img.config, used); err != nil {
			return nil, err
		}
		if p := img.config.OS + "/" + img.config.Architecture; p != img.platform {
			return nil, fmt.Errorf("%s: the index says %s is for %s, its config says %s", dir, d.Digest, img.platform, p)
		}
		for _, layer := range img.manifest.Layers {
			if err := l.checkBlob(layer); err != nil {
				return nil, err
			}
			used[layer.Digest] = true
		}
		l.images = append(l.images, img)
	}
	return l, l.checkNoOtherBlobs(used)
}

// platforms returns the platforms of the index, sorted.
func (l *layout) platforms() []string {
	var out []string
	for _, img := range l.images {
		out = append(out, img.platform)
	}
	slices.Sort(out)
	return out
}

// setRefName names the index by tag in index.json (buildah names it by its whole local
// reference), so that `skopeo copy oci:DIR:TAG` finds it. index.json is not a blob:
// no digest changes.
func (l *layout) setRefName(tag string) error {
	l.index.Annotations = map[string]string{ocispec.AnnotationRefName: tag}
	top := ocispec.Index{MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{l.index}}
	top.SchemaVersion = 2
	data, err := json.Marshal(top)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(l.dir, ocispec.ImageIndexFile), data, 0o644)
}

func (l *layout) blobPath(d digest.Digest) string {
	return filepath.Join(l.dir, ocispec.ImageBlobsDir, d.Algorithm().String(), d.Encoded())
}

// openBlob opens a blob that openLayout has checked.
func (l *layout) openBlob(d ocispec.Descriptor) (*os.File, error) {
	return os.Open(l.blobPath(d.Digest))
}

// readJSONBlob reads a small blob, checks its size and digest, and decodes it.
func (l *layout) readJSONBlob(d ocispec.Descriptor, v any, used map[digest.Digest]bool) error {
	if err := d.Digest.Validate(); err != nil {
		return fmt.Errorf("%s: %w", l.dir, err)
	}
	data, err := os.ReadFile(l.blobPath(d.Digest))
	if err != nil {
		return err
	}
	if err := blobMismatch(d, int64(len(data)), d.Digest.Algorithm().FromBytes(data) == d.Digest); err != nil {
		return fmt.Errorf("%s: %w", l.dir, err)
	}
	used[d.Digest] = true
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: blob %s: %w", l.dir, d.Digest, err)
	}
	return nil
}

// checkBlob reads a blob through and checks its size and digest.
func (l *layout) checkBlob(d ocispec.Descriptor) error {
	if err := d.Digest.Validate(); err != nil {
		return fmt.Errorf("%s: %w", l.dir, err)
	}
	f, err := os.Open(l.blobPath(d.Digest))
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only
	verifier := d.Digest.Verifier()
	n, err := io.Copy(verifier, f)
	if err != nil {
		return err
	}
	if err := blobMismatch(d, n, verifier.Verified()); err != nil {
		return fmt.Errorf("%s: %w", l.dir, err)
	}
	return nil
}

// blobMismatch says how a blob differs from its descriptor, if it does.
func blobMismatch(d ocispec.Descriptor, size int64, digestOK bool) error {
	switch {
	case size != d.Size:
		return fmt.Errorf("blob %s has %d bytes, its descriptor says %d", d.Digest, size, d.Size)
	case !digestOK:
		return fmt.Errorf("blob %s does not hash to its digest: its content changed", d.Digest)
	}
	return nil
}

func (l *layout) checkNoOtherBlobs(used map[digest.Digest]bool) error {
	files, err := filepath.Glob(filepath.Join(l.dir, ocispec.ImageBlobsDir, "*", "*"))
	if err != nil {
		return err
	}
	for _, file := range files {
		d := digest.NewDigestFromEncoded(digest.Algorithm(filepath.Base(filepath.Dir(file))), filepath.Base(file))
		if !used[d] {
			return fmt.Errorf("%s: blob %s is not part of the image index", l.dir, d)
		}
	}
	return nil
}

func readJSONFile(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
