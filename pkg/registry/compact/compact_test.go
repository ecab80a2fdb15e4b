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

package compact

import (
	"errors"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "1"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:index.html":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`)}}},
		Data: map[string]string{"index.html": "hello"},
	}
}

func sameBytes(a, b []byte) bool  { return unsafe.SliceData(a) == unsafe.SliceData(b) }
func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
func protobufCodec(t *testing.T) runtime.Codec {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// Protobuf, as in etcd.
	factory := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(factory.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	return factory.CodecForVersions(info.Serializer, info.Serializer, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
}

// Two objects decoded through the codec share their repeated metadata and still say
// exactly what was stored.
func TestCodecSharesRepeatedMetadata(t *testing.T) {
	c := Codec(protobufCodec(t), Metadata)
	var decoded []*corev1.ConfigMap
	for _, name := range []string{"one", "two"} {
		want := configMap(name)
		data, err := runtime.Encode(c, want)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := runtime.Decode(c, data)
		if err != nil {
			t.Fatal(err)
		}
		got := obj.(*corev1.ConfigMap)
		if !apiequality.Semantic.DeepEqual(got, want) {
			t.Fatalf("decoded %s differs from what was encoded:\n%#v\n%#v", name, got, want)
		}
		decoded = append(decoded, got)
	}
	a, b := decoded[0], decoded[1]
	checks := map[string]bool{
		"managed fields set":        sameBytes(a.ManagedFields[0].FieldsV1.GetRawBytes(), b.ManagedFields[0].FieldsV1.GetRawBytes()),
		"managed fields manager":    sameString(a.ManagedFields[0].Manager, b.ManagedFields[0].Manager),
		"managed fields apiVersion": sameString(a.ManagedFields[0].APIVersion, b.ManagedFields[0].APIVersion),
		"namespace":                 sameString(a.Namespace, b.Namespace),
		"label value":               sameString(a.Labels["app"], b.Labels["app"]),
		"owner kind":                sameString(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind),
	}
	for what, shared := range checks {
		if !shared {
			t.Errorf("%s: each object has its own copy; want one shared", what)
		}
	}
	if sameString(a.Name, b.Name) {
		t.Error("names share storage, but they differ")
	}
}

// What the registry changes it deep-copies first; the copy owns its bytes.
func TestDeepCopyOwnsItsBytes(t *testing.T) {
	a, b := configMap("one"), configMap("two")
	Metadata(a)
	Metadata(b)
	c := a.DeepCopy()
	if sameBytes(c.ManagedFields[0].FieldsV1.GetRawBytes(), a.ManagedFields[0].FieldsV1.GetRawBytes()) {
		t.Fatal("a deep copy shares the managed fields set")
	}
	c.ManagedFields[0].FieldsV1.GetRawBytes()[0] = '['
	if b.ManagedFields[0].FieldsV1.GetRawString() != configMap("x").ManagedFields[0].FieldsV1.GetRawString() {
		t.Fatal("changing a deep copy changed another object")
	}
}

type failing struct{ runtime.Codec }

func (failing) Decode([]byte, *schema.GroupVersionKind, runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	return nil, nil, errors.New("corrupt")
}

func TestCodecPassesErrorsThrough(t *testing.T) {
	called := false
	c := Codec(failing{}, func(runtime.Object) { called = true })
	if _, _, err := c.Decode([]byte("x"), nil, nil); err == nil || err.Error() != "corrupt" {
		t.Fatalf("got %v, want the wrapped codec's error", err)
	}
	if called {
		t.Fatal("compacted an object that was not decoded")
	}
}
