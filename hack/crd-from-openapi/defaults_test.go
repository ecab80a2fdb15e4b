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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestCRDDefaultingMatchesGoDefaulting applies the CRD's defaults the way kube-apiserver
// does (structural defaulting) and our Go defaulting to the same objects: the specs must be
// equal except for the fields whose Go default depends on other fields.
func TestCRDDefaultingMatchesGoDefaulting(t *testing.T) {
	s := structural(t)
	scheme := runtime.NewScheme()
	install.Install(scheme)
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	// Without an image the CRD defaults the image but cannot default its port, security
	// contexts or Service ports: Go picks them by whether the image was defaulted. Nor
	// whether metrics are on: Go turns them off where nginx's ports take the exporter's.
	conditional := [][]string{{"spec", "ports"}, {"spec", "securityContext"}, {"spec", "pod"}, {"spec", "service", "ports"},
		{"spec", "metrics", "enabled"}}

	for _, tc := range []struct {
		name   string
		object string
		// goOnly are the fields only Go defaulting fills, because their default is conditional.
		goOnly    [][]string
		wantPorts []interface{}
	}{{
		name:   "empty",
		object: `{"metadata": {"name": "empty"}}`,
		goOnly: append([][]string{{"spec", "replicas"}}, conditional...),
	}, {
		name:   "QPS mode",
		object: `{"metadata": {"name": "qps"}, "spec": {"qps": {"singlePodQPS": 50, "totalQPS": 120}}}`,
		goOnly: conditional,
	}, {
		name:      "own port without protocol",
		object:    `{"metadata": {"name": "own"}, "spec": {"replicas": 2, "ports": [{"name": "web", "containerPort": 8080}]}}`,
		goOnly:    [][]string{{"spec", "service", "ports"}, {"spec", "securityContext"}, {"spec", "pod"}, {"spec", "metrics", "enabled"}},
		wantPorts: []interface{}{map[string]interface{}{"name": "web", "containerPort": float64(8080), "protocol": "TCP"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var crdObject map[string]interface{}
			if err := json.Unmarshal([]byte(tc.object), &crdObject); err != nil {
				t.Fatal(err)
			}
			structuraldefaulting.Default(crdObject, s)

			in, decoded, goObject, err := goDefaulting(scheme, decoder, tc.object)
			if err != nil {
				t.Fatal(err)
			}
			dropDecodingArtifacts(goObject, decoded, in)
			crdObject = normalizeNumbers(t, crdObject)
			for _, path := range tc.goOnly {
				if _, found, _ := unstructured.NestedFieldNoCopy(crdObject, path...); found {
					t.Errorf("the CRD defaults %v, whose Go default is conditional", path)
				}
				unstructured.RemoveNestedField(goObject, path...)
			}
			if diff := cmp.Diff(goObject["spec"], crdObject["spec"]); diff != "" {
				t.Errorf("spec: Go defaulting (-) and CRD defaulting (+) differ:\n%s", diff)
			}
			if image, _, _ := unstructured.NestedString(crdObject, "spec", "image"); image != v1alpha2.DefaultImage {
				t.Errorf("CRD default image = %q, want %q", image, v1alpha2.DefaultImage)
			}
			if ports, _, _ := unstructured.NestedSlice(crdObject, "spec", "ports"); !cmp.Equal(ports, tc.wantPorts) {
				t.Errorf("CRD defaulted ports = %v, want %v", ports, tc.wantPorts)
			}
		})
	}
}

// dropDecodingArtifacts removes from Go's output what decoding alone gives a field the
// object did not send (the "{}" of a non-pointer struct): defaulting did not put it there.
func dropDecodingArtifacts(out, decoded, in map[string]interface{}) {
	for key, value := range out {
		inValue, sent := in[key]
		if !sent && cmp.Equal(decoded[key], value) {
			delete(out, key)
			continue
		}
		outMap, isMap := value.(map[string]interface{})
		decodedMap, _ := decoded[key].(map[string]interface{})
		inMap, _ := inValue.(map[string]interface{})
		if isMap {
			dropDecodingArtifacts(outMap, decodedMap, inMap)
		}
	}
}

// normalizeNumbers gives an object the float64 numbers of encoding/json, as Go's output has.
func normalizeNumbers(t *testing.T, object map[string]interface{}) map[string]interface{} {
	t.Helper()
	data, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	var normalized map[string]interface{}
	if err := json.Unmarshal(data, &normalized); err != nil {
		t.Fatal(err)
	}
	return normalized
}

// TestDerivedDefaults pins which fields the probes found unconditional, so that a change
// of our Go defaulting shows up here and in the committed CRD.
func TestDerivedDefaults(t *testing.T) {
	crd, err := buildCRD()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var walk func(schema map[string]interface{}, path string)
	walk = func(schema map[string]interface{}, path string) {
		if d, ok := schema["default"]; ok {
			raw, _ := json.Marshal(d)
			got[path] = string(raw)
		}
		properties, _ := schema["properties"].(map[string]interface{})
		for name, prop := range properties {
			walk(prop.(map[string]interface{}), path+"."+name)
		}
		if items, ok := schema["items"].(map[string]interface{}); ok {
			walk(items, path+"[]")
		}
	}
	root, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	walk(root, "")
	want := map[string]string{
		".spec":                  `{}`,
		".spec.image":            `"` + v1alpha2.DefaultImage + `"`,
		".spec.metrics":          `{}`,
		".spec.ports[].protocol": `"TCP"`,
		".spec.service":          `{}`,
		".spec.service.type":     `"ClusterIP"`,
		".spec.env[].valueFrom.fileKeyRef.optional": `false`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("derived defaults (-want +got):\n%s", diff)
	}
	for _, conditional := range []string{".spec.replicas", ".spec.ports", ".spec.service.ports", ".spec.service.ports[].port",
		".spec.securityContext", ".spec.pod", ".spec.pod.securityContext", ".spec.metrics.enabled"} {
		if _, ok := got[conditional]; ok {
			t.Errorf("%s has a CRD default, but its Go default depends on other fields", conditional)
		}
	}
}
