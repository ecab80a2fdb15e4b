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
	"fmt"
	"path"
	"strings"
)

// ociIndexArchive is an oci-archive whose index.json names one image index, one image
// per platform: what build.sh writes with PLATFORMS.
type ociIndexArchive struct {
	file   string
	Ref    string // org.opencontainers.image.ref.name
	Images []ociImage
}

// ociImage is one platform's image of the index.
type ociImage struct {
	Platform string // os/architecture, as the index says
	Config   imageConfig
	layers   []string // blob paths in the archive
}

type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

const ociIndexType = "application/vnd.oci.image.index.v1+json"

func readOCIIndexArchive(file string) (*ociIndexArchive, error) {
	var top struct{ Manifests []ociDescriptor }
	if err := readArchiveJSON(file, "index.json", &top); err != nil {
		return nil, err
	}
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != ociIndexType {
		return nil, fmt.Errorf("%s: index.json names %d manifests (%v), want one image index", file, len(top.Manifests), top.Manifests)
	}
	a := &ociIndexArchive{file: file, Ref: top.Manifests[0].Annotations["org.opencontainers.image.ref.name"]}
	var index struct {
		MediaType string          `json:"mediaType"`
		Manifests []ociDescriptor `json:"manifests"`
	}
	if err := readArchiveJSON(file, blobPath(top.Manifests[0].Digest), &index); err != nil {
		return nil, err
	}
	for _, m := range index.Manifests {
		if m.Platform == nil {
			return nil, fmt.Errorf("%s: manifest %s of the index has no platform", file, m.Digest)
		}
		var manifest struct {
			Config ociDescriptor   `json:"config"`
			Layers []ociDescriptor `json:"layers"`
		}
		if err := readArchiveJSON(file, blobPath(m.Digest), &manifest); err != nil {
			return nil, err
		}
		img := ociImage{Platform: m.Platform.OS + "/" + m.Platform.Architecture}
		if err := readArchiveJSON(file, blobPath(manifest.Config.Digest), &img.Config); err != nil {
			return nil, err
		}
		for _, l := range manifest.Layers {
			img.layers = append(img.layers, blobPath(l.Digest))
		}
		a.Images = append(a.Images, img)
	}
	return a, nil
}

// blobPath is where an OCI layout keeps the blob of a digest.
func blobPath(digest string) string {
	algorithm, hex, _ := strings.Cut(digest, ":")
	return path.Join("blobs", algorithm, hex)
}

// unpack writes the root filesystem of one image of the index into dir.
func (a *ociIndexArchive) unpack(img ociImage, dir string) error {
	return unpackLayers(a.file, img.layers, dir)
}
