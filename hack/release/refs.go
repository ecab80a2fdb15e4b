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
	"errors"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// imageRef is an image reference taken apart: repository[:tag][@digest].
type imageRef struct {
	repository, tag, digest string
}

func parseImageRef(ref string) imageRef {
	var r imageRef
	ref, r.digest, _ = strings.Cut(ref, "@")
	// A tag follows the last colon after the last slash (a colon before it is a port).
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, r.tag = ref[:i], ref[i+1:]
	}
	r.repository = ref
	return r
}

// manifestImages returns the value of every "image" and "containerImage" field in a
// stream of YAML documents: the containers' images of rendered manifests, and a CSV's
// relatedImages and containerImage annotation besides.
func manifestImages(data []byte) ([]string, error) {
	var out []string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		walkYAML(doc, func(m map[string]any) {
			for _, key := range []string{"image", "containerImage"} {
				if s, ok := m[key].(string); ok {
					out = append(out, s)
				}
			}
		})
	}
}

// chartImages returns the image references a chart's values make, the way its templates
// join them: every map with a repository, followed by :tag when there is a tag.
func chartImages(values []byte) ([]string, error) {
	var doc any
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, err
	}
	var out []string
	walkYAML(doc, func(m map[string]any) {
		repository, ok := m["repository"].(string)
		if !ok {
			return
		}
		if tag, _ := m["tag"].(string); tag != "" {
			repository += ":" + tag
		}
		out = append(out, repository)
	})
	return out, nil
}

// walkYAML calls fn for every mapping in a decoded YAML value.
func walkYAML(v any, fn func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(v)
		for _, child := range v {
			walkYAML(child, fn)
		}
	case []any:
		for _, child := range v {
			walkYAML(child, fn)
		}
	}
}
