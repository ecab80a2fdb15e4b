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

// Package compact shrinks the objects an apiserver decodes from etcd and keeps in its
// watch cache, without changing what they say. Objects of one kind written by the same
// clients repeat the same strings and the same managed-fields sets; the decoder gives
// each object its own copies. Here equal values are made to share one copy.
//
// Sharing is safe because objects that came from storage are read-only: the watch cache
// hands the same object to every reader, and the registry deep-copies (which copies
// slices and strings' bytes afresh) before it changes one.
package compact

import (
	"unique"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
)

// String returns s's canonical copy. Canonical copies are dropped by the garbage
// collector once no object refers to them.
func String[S ~string](s S) S {
	if s == "" {
		return s
	}
	return S(unique.Make(string(s)).Value())
}

// bytes returns a canonical, read-only copy of b: the managed-fields sets of objects
// written the same way are byte-for-byte equal, and they are the largest part of an
// object's metadata. Nothing may write into the returned slice; decoding into an object
// that holds it would (FieldsV1's decoders append into Raw[:0]), which is why only
// objects read from storage, which are never decoded into again, are compacted.
func bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	s := unique.Make(string(b)).Value()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// ObjectMeta shares the strings of m that repeat across objects: namespace, label and
// annotation values, owners' kinds and API versions, and the managed-fields entries whole
// but for their timestamps. Names, uids and resourceVersions are left alone: they differ
// by design.
func ObjectMeta(m metav1.Object) {
	m.SetNamespace(String(m.GetNamespace()))
	stringValues(m.GetLabels())
	stringValues(m.GetAnnotations())
	owners := m.GetOwnerReferences()
	for i := range owners {
		owners[i].APIVersion = String(owners[i].APIVersion)
		owners[i].Kind = String(owners[i].Kind)
	}
	fields := m.GetManagedFields()
	for i := range fields {
		f := &fields[i]
		f.Manager = String(f.Manager)
		f.Operation = String(f.Operation)
		f.APIVersion = String(f.APIVersion)
		f.FieldsType = String(f.FieldsType)
		f.Subresource = String(f.Subresource)
		if f.FieldsV1 != nil {
			f.FieldsV1.Raw = bytes(f.FieldsV1.GetRawBytes()) //nolint:staticcheck // SetRawBytes copies; one copy shared is the point
		}
	}
}

// stringValues shares the values of m (its keys stay: replacing a key is a delete and
// an insert, which would grow the map instead).
func stringValues(m map[string]string) {
	for k, v := range m {
		m[k] = String(v)
	}
}

// Codec compacts every object it decodes with compactObject, after the wrapped codec has
// decoded, converted and defaulted it. The storage codec cannot tell the watch cache's
// objects from those a GET reads from etcd and drops after answering, so those are
// compacted too: one hash-map lookup per shared value.
func Codec(c runtime.Codec, compactObject func(runtime.Object)) runtime.Codec {
	return codec{Codec: c, compact: compactObject}
}

type codec struct {
	runtime.Codec
	compact func(runtime.Object)
}

func (c codec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if err == nil && obj != nil {
		c.compact(obj)
	}
	return obj, gvk, err
}

// RESTOptionsGetter has every storage built from getter's options compact what it
// decodes with compactObject: the objects of the watch cache, and those read from etcd.
func RESTOptionsGetter(getter generic.RESTOptionsGetter, compactObject func(runtime.Object)) generic.RESTOptionsGetter {
	return optionsGetter{RESTOptionsGetter: getter, compact: compactObject}
}

type optionsGetter struct {
	generic.RESTOptionsGetter
	compact func(runtime.Object)
}

func (g optionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	config := *opts.StorageConfig // a copy: the getter's may be shared
	config.Codec = Codec(config.Codec, g.compact)
	opts.StorageConfig = &config
	return opts, nil
}

// Metadata is a compactObject for any kind: it compacts the object's metadata only.
func Metadata(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		ObjectMeta(m)
	}
}
