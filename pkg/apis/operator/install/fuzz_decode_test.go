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
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/example/nginx-operator/pkg/apis/operator"
	operatorfuzzer "github.com/example/nginx-operator/pkg/apis/operator/fuzzer"
)

// The fuzz targets below feed request bodies to the decoders the apiserver builds for a
// create or update (k8s.io/apiserver endpoints/handlers): the codec factory of our scheme
// (pkg/apiserver builds its Codecs the same way), the body's media type, the URL's version
// as the default kind, decoding to the internal version with defaulting. Whatever decodes
// must encode again in every served version and decode to what conversion and defaulting
// make of it, and settle there.

// FuzzDecodeJSON fuzzes JSON request bodies for both served versions.
func FuzzDecodeJSON(f *testing.F) {
	fuzzRequestBodies(f, runtime.ContentTypeJSON)
}

// FuzzDecodeYAML fuzzes YAML request bodies (application/yaml) for both served versions.
func FuzzDecodeYAML(f *testing.F) {
	fuzzRequestBodies(f, runtime.ContentTypeYAML)
}

func fuzzRequestBodies(f *testing.F, mediaType string) {
	scheme := newScheme()
	codecs := runtimeserializer.NewCodecFactory(scheme)
	for _, seed := range encodedSeeds(f, scheme, codecs, mediaType) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		assertDecodesLikeTheServer(t, scheme, codecs, mediaType, body)
	})
}

// encodedSeeds are fuzzed objects of both versions in the media type, for a fixed seed.
func encodedSeeds(f *testing.F, scheme *runtime.Scheme, codecs runtimeserializer.CodecFactory, mediaType string) [][]byte {
	filler := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, operatorfuzzer.Funcs), rand.NewSource(11), codecs)
	info := serializerFor(f, codecs, mediaType)
	var seeds [][]byte
	for _, gv := range scheme.PrioritizedVersionsForGroup(operator.GroupName) {
		for range 3 {
			obj, err := scheme.New(gv.WithKind("NginxOperator"))
			if err != nil {
				f.Fatal(err)
			}
			filler.Fill(obj)
			data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, gv), obj)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, data)
		}
	}
	return seeds
}

func serializerFor(t testing.TB, codecs runtimeserializer.CodecFactory, mediaType string) runtime.SerializerInfo {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no serializer for %s", mediaType)
	}
	return info
}

// assertDecodesLikeTheServer decodes body as a create to each served version would, with
// the lenient and the strict serializer (fieldValidation Ignore, and Warn or Strict). It
// must never panic, and an internal NginxOperator that decodes must survive an encode and
// decode in each served version (assertStableThrough).
func assertDecodesLikeTheServer(t *testing.T, scheme *runtime.Scheme, codecs runtimeserializer.CodecFactory, mediaType string, body []byte) {
	t.Helper()
	info := serializerFor(t, codecs, mediaType)
	hub := schema.GroupVersion{Group: operator.GroupName, Version: runtime.APIVersionInternal}
	versions := scheme.PrioritizedVersionsForGroup(operator.GroupName)
	for _, serializer := range []runtime.Serializer{info.Serializer, info.StrictSerializer} {
		decoder := codecs.DecoderToVersion(serializer, hub)
		for _, gv := range versions {
			defaultGVK := gv.WithKind("NginxOperator")
			obj, _, err := decoder.Decode(body, &defaultGVK, &operator.NginxOperator{})
			if err != nil {
				// The strict serializer reports unknown and duplicate fields as a strict
				// error next to the decoded object; the server warns or refuses.
				if !runtime.IsStrictDecodingError(err) {
					continue
				}
			}
			internal, ok := obj.(*operator.NginxOperator)
			if !ok {
				// Another kind in the body: the handler refuses it with 400.
				continue
			}
			for _, target := range versions {
				assertStableThrough(t, scheme, codecs, info, decoder, internal, target)
			}
		}
	}
}

// assertStableThrough encodes a decoded object in target and decodes it again. The
// result must be what conversion to target, target's defaults and conversion back make
// of the object in memory (so the wire loses nothing; FuzzConversion checks what
// conversion keeps), and from then on encoding and decoding must be a fixed point.
func assertStableThrough(t *testing.T, scheme *runtime.Scheme, codecs runtimeserializer.CodecFactory, info runtime.SerializerInfo, decoder runtime.Decoder, obj *operator.NginxOperator, target schema.GroupVersion) {
	t.Helper()
	encoder := codecs.EncoderForVersion(info.Serializer, target)
	roundTrip := func(obj *operator.NginxOperator) ([]byte, *operator.NginxOperator) {
		t.Helper()
		data, err := runtime.Encode(encoder, obj)
		if err != nil {
			t.Fatalf("decoded but does not encode as %v: %v\nobject: %#v", target, err, obj)
		}
		again, _, err := decoder.Decode(data, nil, &operator.NginxOperator{})
		if err != nil {
			t.Fatalf("own %v encoding does not decode: %v\n%s", target, err, data)
		}
		return data, withoutTypeMeta(again.(*operator.NginxOperator))
	}

	data, got := roundTrip(obj)
	external, err := scheme.ConvertToVersion(obj.DeepCopy(), target)
	if err != nil {
		t.Fatalf("decoded but does not convert to %v: %v", target, err)
	}
	scheme.Default(external)
	converted, err := scheme.ConvertToVersion(external, schema.GroupVersion{Group: operator.GroupName, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("does not convert back from %v: %v", target, err)
	}
	want := withoutTypeMeta(converted.(*operator.NginxOperator))
	if !apiequality.Semantic.DeepEqual(want, got) {
		t.Fatalf("the %v encoding changes the object (-converted in memory +encoded and decoded):\n%s\nencoding:\n%s", target, cmp.Diff(want, got), data)
	}
	second, again := roundTrip(got)
	third, _ := roundTrip(again)
	if !apiequality.Semantic.DeepEqual(got, again) || !bytes.Equal(second, third) {
		t.Fatalf("round trips through %v do not settle (-second +third decoding):\n%s\nsecond: %s\nthird:  %s", target, cmp.Diff(got, again), second, third)
	}
}

func withoutTypeMeta(obj *operator.NginxOperator) *operator.NginxOperator {
	obj = obj.DeepCopy()
	obj.TypeMeta = operator.NginxOperator{}.TypeMeta
	return obj
}
