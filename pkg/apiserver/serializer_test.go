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

package apiserver

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
)

// TestGroupSerializerIsTheLibraryDefault compares the serializers of our API group with
// those genericapiserver.NewDefaultAPIGroupInfo's wiring builds: streaming JSON and protobuf
// list encoders, protobuf offered, CBOR only behind its feature gate.
func TestGroupSerializerIsTheLibraryDefault(t *testing.T) {
	streaming := []serializer.CodecFactoryOptionsMutator{
		serializer.WithStreamingCollectionEncodingToJSON(),
		serializer.WithStreamingCollectionEncodingToProtobuf(),
	}
	for _, cborEnabled := range []bool{false, true} {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.CBORServingAndStorage, cborEnabled)
		opts := streaming
		if cborEnabled {
			opts = append(opts[:len(opts):len(opts)], serializer.WithSerializer(cbor.NewSerializerInfo))
		}
		want := serializer.NewCodecFactory(Scheme, opts...).SupportedMediaTypes()
		got := newAPIGroupInfo().NegotiatedSerializer.SupportedMediaTypes()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("CBOR gate %v: group serializers %v differ from the library's default wiring %v", cborEnabled, mediaTypes(got), mediaTypes(want))
		}
		// The comparison must see the streaming options: a factory without them differs.
		if withoutStreaming := serializer.NewCodecFactory(Scheme, opts[len(streaming):]...).SupportedMediaTypes(); reflect.DeepEqual(got, withoutStreaming) {
			t.Errorf("CBOR gate %v: group serializers equal a factory without streaming encoders", cborEnabled)
		}
		served := mediaTypes(got)
		if !slices.Contains(served, runtime.ContentTypeProtobuf) {
			t.Errorf("CBOR gate %v: %v does not offer protobuf", cborEnabled, served)
		}
		if slices.Contains(served, runtime.ContentTypeCBOR) != cborEnabled {
			t.Errorf("CBOR gate %v: served media types %v", cborEnabled, served)
		}
	}
}

func mediaTypes(infos []runtime.SerializerInfo) []string {
	var out []string
	for _, info := range infos {
		out = append(out, info.MediaType)
	}
	return out
}
