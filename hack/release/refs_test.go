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
	"slices"
	"testing"
)

func TestParseImageRef(t *testing.T) {
	for ref, want := range map[string]imageRef{
		"example.com/nginx-operator:v0.1.0":               {repository: "example.com/nginx-operator", tag: "v0.1.0"},
		"127.0.0.1:5000/nginx-operator/etcd@sha256:abc":   {repository: "127.0.0.1:5000/nginx-operator/etcd", digest: "sha256:abc"},
		"127.0.0.1:5000/nginx-operator:v0.2.0@sha256:abc": {repository: "127.0.0.1:5000/nginx-operator", tag: "v0.2.0", digest: "sha256:abc"},
		"localhost:5000/etcd":                             {repository: "localhost:5000/etcd"},
		"registry.k8s.io/etcd:3.6.8-0":                    {repository: "registry.k8s.io/etcd", tag: "3.6.8-0"},
	} {
		if got := parseImageRef(ref); got != want {
			t.Errorf("parseImageRef(%q) = %+v, want %+v", ref, got, want)
		}
	}
}

func TestManifestImages(t *testing.T) {
	docs := `apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      initContainers: [{name: init, image: a@sha256:1}]
      containers:
        - name: c
          image: b:v1
---
kind: ClusterServiceVersion
metadata:
  annotations:
    containerImage: c@sha256:3
    alm-examples: '[{"spec": {"image": "nginx:1.27.4"}}]'
spec:
  relatedImages:
    - {name: c, image: c@sha256:3}
`
	got, err := manifestImages([]byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	// The example object inside the annotation's JSON is not an image the install runs.
	if want := []string{"a@sha256:1", "b:v1", "c@sha256:3", "c@sha256:3"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestChartImages(t *testing.T) {
	values := `image: {repository: r/op, tag: "v1@sha256:1", pullPolicy: ""}
etcd:
  image: {repository: r/etcd, tag: ""}
`
	got, err := chartImages([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"r/etcd", "r/op:v1@sha256:1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
