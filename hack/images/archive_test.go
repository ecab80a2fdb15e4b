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

package images

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// dockerArchive is what `docker load` reads: manifest.json, the image config, and one
// tar per layer.
type dockerArchive struct {
	file     string
	RepoTags []string
	Config   imageConfig
	layers   []string
}

// imageConfig is the part of an image configuration the tests look at.
type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Env        []string          `json:"Env"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Labels     map[string]string `json:"Labels"`
		StopSignal string            `json:"StopSignal"`
	} `json:"config"`
}

func readDockerArchive(file string) (*dockerArchive, error) {
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := readArchiveJSON(file, "manifest.json", &manifest); err != nil {
		return nil, err
	}
	if len(manifest) != 1 {
		return nil, fmt.Errorf("%s: manifest.json lists %d images, want 1", file, len(manifest))
	}
	a := &dockerArchive{file: file, RepoTags: manifest[0].RepoTags, layers: manifest[0].Layers}
	if err := readArchiveJSON(file, manifest[0].Config, &a.Config); err != nil {
		return nil, err
	}
	return a, nil
}

func readArchiveJSON(file, name string, into any) error {
	found := false
	err := walkTar(file, func(h *tar.Header, r io.Reader) error {
		if path.Clean(h.Name) != name {
			return nil
		}
		found = true
		return json.NewDecoder(r).Decode(into)
	})
	if err == nil && !found {
		err = fmt.Errorf("%s has no %s", file, name)
	}
	return err
}

// unpack writes the image's root filesystem, layer after layer, into dir.
func (a *dockerArchive) unpack(dir string) error { return unpackLayers(a.file, a.layers, dir) }

// unpackLayers applies the layers, files of the archive, in order to dir.
func unpackLayers(file string, layers []string, dir string) error {
	for _, layer := range layers {
		found := false
		err := walkTar(file, func(h *tar.Header, r io.Reader) error {
			if path.Clean(h.Name) != path.Clean(layer) || found {
				return nil
			}
			found = true
			if h.Typeflag == tar.TypeSymlink { // docker-archive may link a layer to its blob
				return fmt.Errorf("layer %s is a link to %s; follow it", layer, h.Linkname)
			}
			return extractLayer(r, dir)
		})
		if err != nil {
			return fmt.Errorf("%s layer %s: %w", file, layer, err)
		}
		if !found {
			return fmt.Errorf("%s has no layer %s", file, layer)
		}
	}
	return nil
}

func walkTar(file string, visit func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := visit(h, tr); err != nil {
			return err
		}
	}
}

// extractLayer applies one layer tar (optionally gzipped) to dir with owners and modes.
func extractLayer(r io.Reader, dir string) error {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		target := filepath.Join(dir, name)
		if base := path.Base(name); strings.HasPrefix(base, ".wh.") {
			if err := os.RemoveAll(filepath.Join(filepath.Dir(target), strings.TrimPrefix(base, ".wh."))); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(h.Mode).Perm() | os.FileMode(h.Mode)&(os.ModeSticky|os.ModeSetuid|os.ModeSetgid)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = os.Remove(target)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
			continue // owners and modes of links are not used
		case tar.TypeLink:
			_ = os.Remove(target)
			if err := os.Link(filepath.Join(dir, path.Clean("/"+h.Linkname)), target); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("%s: unexpected entry type %q in a layer", h.Name, h.Typeflag)
		}
		if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
			return err
		}
		if err := os.Chmod(target, mode); err != nil {
			return err
		}
	}
}
