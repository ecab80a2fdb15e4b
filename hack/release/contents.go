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
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// contents is what one platform's image holds, as far as the SBOM and the size report
// are concerned: its sizes, its Go binaries and its Debian packages.
type contents struct {
	// compressed is what a pull transfers (manifest, config and layers as stored);
	// uncompressed is the size of the layers' tar streams.
	compressed, uncompressed int64
	binaries                 []goBinary
	debs                     []debPackage
}

// goBinary is a Go program in the image, with the modules it was built from.
type goBinary struct {
	path   string // absolute, inside the image
	size   int64
	sha256 string
	info   *buildinfo.BuildInfo
}

// dpkgStatus are the files dpkg records installed packages in: Debian's own database, and
// the per-package files of distroless-style images.
const dpkgStatus, dpkgStatusDir = "var/lib/dpkg/status", "var/lib/dpkg/status.d/"

// readContents reads the image's layers in order, as a container runtime would stack
// them (later files and whiteouts hide earlier ones), and looks at every regular file
// that is an ELF binary or a dpkg status file.
func readContents(l *layout, img platformImage) (*contents, error) {
	c := &contents{compressed: img.descriptor.Size + img.manifest.Config.Size}
	binaries := map[string]goBinary{}
	status := map[string][]byte{}
	for _, layer := range img.manifest.Layers {
		c.compressed += layer.Size
		n, err := readLayer(l, layer, func(name string, hdr *tar.Header, r io.Reader) error {
			switch base := path.Base(name); {
			case base == ".wh..wh..opq": // an opaque directory: nothing below it from earlier layers
				dir := path.Dir(name) + "/"
				deleteUnder(binaries, dir)
				deleteUnder(status, dir)
				return nil
			case strings.HasPrefix(base, ".wh."):
				hidden := path.Join(path.Dir(name), strings.TrimPrefix(base, ".wh."))
				deleteUnder(binaries, hidden+"/")
				deleteUnder(status, hidden+"/")
				delete(binaries, hidden)
				delete(status, hidden)
				return nil
			}
			delete(binaries, name)
			delete(status, name)
			if hdr.Typeflag != tar.TypeReg {
				return nil
			}
			if name == dpkgStatus || strings.HasPrefix(name, dpkgStatusDir) {
				data, err := io.ReadAll(r)
				status[name] = data
				return err
			}
			b, err := readGoBinary(name, hdr.Size, r)
			if b != nil {
				binaries[name] = *b
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: layer %s: %w", l.dir, layer.Digest, err)
		}
		c.uncompressed += n
	}
	for _, b := range binaries {
		c.binaries = append(c.binaries, b)
	}
	sort.Slice(c.binaries, func(i, j int) bool { return c.binaries[i].path < c.binaries[j].path })
	names := make([]string, 0, len(status))
	for name := range status {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		debs, err := parseDpkgStatus(bytes.NewReader(status[name]))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", l.dir, name, err)
		}
		c.debs = append(c.debs, debs...)
	}
	return c, nil
}

// readLayer calls fn for each entry of a layer with its clean path (no leading ./ or /),
// and returns the size of the uncompressed tar stream.
func readLayer(l *layout, d ocispec.Descriptor, fn func(string, *tar.Header, io.Reader) error) (int64, error) {
	f, err := l.openBlob(d)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read only
	var stream io.Reader = f
	switch d.MediaType {
	case ocispec.MediaTypeImageLayerGzip, "application/vnd.docker.image.rootfs.diff.tar.gzip":
		gz, err := gzip.NewReader(bufio.NewReader(f))
		if err != nil {
			return 0, err
		}
		defer func() { _ = gz.Close() }() // read only
		stream = gz
	case ocispec.MediaTypeImageLayer:
	default:
		return 0, fmt.Errorf("layers of media type %q are not supported", d.MediaType)
	}
	counted := &countingReader{r: stream}
	tr := tar.NewReader(counted)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if name == "" {
			continue
		}
		if err := fn(name, hdr, tr); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	// The end-of-archive padding counts: it is part of the stream the runtime unpacks.
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return 0, err
	}
	return counted.n, nil
}

// readGoBinary returns the file as a Go binary, or nil when it is not one.
func readGoBinary(name string, size int64, r io.Reader) (*goBinary, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(4); string(magic) != "\x7fELF" {
		return nil, nil
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	info, err := buildinfo.Read(bytes.NewReader(data))
	if err != nil {
		return nil, nil // ELF, but not Go (a loader or a shared library)
	}
	sum := sha256.Sum256(data)
	return &goBinary{path: "/" + name, size: size, sha256: hex.EncodeToString(sum[:]), info: info}, nil
}

func deleteUnder[V any](m map[string]V, dir string) {
	for name := range m {
		if strings.HasPrefix(name, dir) {
			delete(m, name)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
