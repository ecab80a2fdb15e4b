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

package install

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/example/nginx-operator/pkg/apis/operator"
	operatorfuzzer "github.com/example/nginx-operator/pkg/apis/operator/fuzzer"
)

// protobufPrefix starts every Kubernetes protobuf body ("k8s" and a zero byte).
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	Install(scheme)
	return scheme
}

// externalKinds lists the kinds our external versions define (not the meta options and
// WatchEvent every group registers; metav1 owns their protobuf).
func externalKinds(scheme *runtime.Scheme) []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for _, gv := range scheme.PrioritizedVersionsForGroup(operator.GroupName) {
		for kind, goType := range scheme.KnownTypes(gv) {
			if strings.HasPrefix(goType.PkgPath(), "github.com/example/nginx-operator/") {
				kinds = append(kinds, gv.WithKind(kind))
			}
		}
	}
	return kinds
}

// TestExternalTypesSpeakProtobuf fails when the round-trip test would have no protobuf to
// exercise: every external kind of both versions encodes to Kubernetes protobuf and back.
func TestExternalTypesSpeakProtobuf(t *testing.T) {
	scheme := newScheme()
	kinds := externalKinds(scheme)
	if len(kinds) != 8 {
		t.Fatalf("external kinds = %v, want NginxOperator and NginxOperatorList in v1alpha1 and v1alpha2, and NginxOperatorRevision(List), NginxOperatorRollback and NginxOperatorRendered in v1alpha2", kinds)
	}
	serializer := protobuf.NewSerializer(scheme, scheme)
	for _, gvk := range kinds {
		obj, err := scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := obj.(interface{ Marshal() ([]byte, error) }); !ok {
			t.Errorf("%v has no protobuf marshaler: run make generate", gvk)
			continue
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		var buf bytes.Buffer
		if err := serializer.Encode(obj, &buf); err != nil {
			t.Errorf("%v: protobuf encode: %v", gvk, err)
			continue
		}
		if !bytes.HasPrefix(buf.Bytes(), protobufPrefix) {
			t.Errorf("%v: encoded without the protobuf prefix: %q", gvk, buf.Bytes())
		}
		if _, got, err := serializer.Decode(buf.Bytes(), nil, nil); err != nil || *got != gvk {
			t.Errorf("%v: protobuf decode: %v %v", gvk, got, err)
		}
	}
}

// fuzzSeeds are protobuf encodings of fuzzed objects of every external kind, for a fixed
// random seed: valid inputs the fuzzer mutates.
func fuzzSeeds(scheme *runtime.Scheme) [][]byte {
	codecs := runtimeserializer.NewCodecFactory(scheme)
	filler := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, operatorfuzzer.Funcs), rand.NewSource(9), codecs)
	serializer := protobuf.NewSerializer(scheme, scheme)
	var seeds [][]byte
	for _, gvk := range externalKinds(scheme) {
		for range 3 {
			obj, _ := scheme.New(gvk)
			filler.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			var buf bytes.Buffer
			if err := serializer.Encode(obj, &buf); err != nil {
				panic(err)
			}
			seeds = append(seeds, buf.Bytes())
		}
	}
	return seeds
}

// FuzzDecodeProtobuf feeds arbitrary bytes to the protobuf decoder the apiserver uses for
// request bodies and stored objects. It must never panic, and whatever decodes must
// re-encode and decode to the same object. The envelope names the version, so the seeds
// cover both; the raw message is also unmarshaled into each version's NginxOperator.
// Like FuzzDecodeJSON and FuzzDecodeYAML it also decodes the bytes as a request body
// to each served version, to the internal version, as the server does.
func FuzzDecodeProtobuf(f *testing.F) {
	scheme := newScheme()
	for _, seed := range fuzzSeeds(scheme) {
		f.Add(seed)
	}
	serializer := protobuf.NewSerializer(scheme, scheme)
	codecs := runtimeserializer.NewCodecFactory(scheme)
	versions := scheme.PrioritizedVersionsForGroup(operator.GroupName)
	f.Fuzz(func(t *testing.T, data []byte) {
		if obj, gvk, err := serializer.Decode(data, nil, nil); err == nil {
			assertProtobufRoundTrip(t, serializer, obj, *gvk)
		}
		assertDecodesLikeTheServer(t, scheme, codecs, runtime.ContentTypeProtobuf, data)
		message := bytes.TrimPrefix(data, protobufPrefix)
		for _, gv := range versions {
			obj, err := scheme.New(gv.WithKind("NginxOperator"))
			if err != nil {
				t.Fatal(err)
			}
			if err := obj.(interface{ Unmarshal([]byte) error }).Unmarshal(message); err == nil {
				assertProtobufRoundTrip(t, serializer, obj, gv.WithKind("NginxOperator"))
			}
		}
	})
}

func assertProtobufRoundTrip(t *testing.T, serializer *protobuf.Serializer, obj runtime.Object, gvk schema.GroupVersionKind) {
	t.Helper()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	var buf bytes.Buffer
	if err := serializer.Encode(obj, &buf); err != nil {
		t.Fatalf("%v decoded but does not encode: %v", gvk, err)
	}
	again, _, err := serializer.Decode(buf.Bytes(), nil, nil)
	if err != nil {
		t.Fatalf("%v: own encoding does not decode: %v", gvk, err)
	}
	if !apiequality.Semantic.DeepEqual(obj, again) {
		t.Fatalf("%v changed in a protobuf round trip (-first +second):\n%s", gvk, cmp.Diff(obj, again))
	}
}
