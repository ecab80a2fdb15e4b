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
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	"github.com/example/nginx-operator/pkg/apis/operator"
	operatorfuzzer "github.com/example/nginx-operator/pkg/apis/operator/fuzzer"
)

// FuzzConversion builds objects from the fuzz bytes with the group's fuzzer functions
// (valid-ish objects, as defaulting leaves them) and converts them both ways:
// internal -> each version -> internal loses nothing (v1alpha1 keeps what it cannot
// express in its annotation), and each version -> internal -> the same version gives the
// object back. No conversion may panic or modify its input.
func FuzzConversion(f *testing.F) {
	scheme := newScheme()
	codecs := runtimeserializer.NewCodecFactory(scheme)
	funcs := fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, operatorfuzzer.Funcs)(codecs)
	for _, seed := range []string{"", "\x00", "nginx-operator", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0"} {
		f.Add([]byte(seed))
	}
	hub := schema.GroupVersion{Group: operator.GroupName, Version: runtime.APIVersionInternal}
	versions := scheme.PrioritizedVersionsForGroup(operator.GroupName)
	f.Fuzz(func(t *testing.T, data []byte) {
		filler := randfill.NewFromGoFuzz(data).NilChance(.3).NumElements(0, 3).Funcs(funcs...)

		internal := &operator.NginxOperator{}
		filler.Fill(internal)
		for _, gv := range versions {
			assertConvertsBack(t, scheme, internal, gv, hub)
		}
		for _, gv := range versions {
			external, err := scheme.New(gv.WithKind("NginxOperator"))
			if err != nil {
				t.Fatal(err)
			}
			filler.Fill(external)
			external.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			assertConvertsBack(t, scheme, external, hub, gv)
		}
	})
}

// assertConvertsBack converts obj to via and back to its own version and expects the
// same object, with obj untouched by either conversion. It converts the way the
// server's codecs do, without the defensive copy ConvertToVersion makes first, so a
// conversion function that writes to its input is caught.
func assertConvertsBack(t *testing.T, scheme *runtime.Scheme, obj runtime.Object, via, back schema.GroupVersion) {
	t.Helper()
	before := obj.DeepCopyObject()
	there, err := scheme.UnsafeConvertToVersion(obj, via)
	if err != nil {
		t.Fatalf("%T to %v: %v", obj, via, err)
	}
	if !apiequality.Semantic.DeepEqual(obj, before) {
		t.Fatalf("converting %T to %v modified its input:\n%s", obj, via, cmp.Diff(before, obj))
	}
	thereBefore := there.DeepCopyObject()
	again, err := scheme.UnsafeConvertToVersion(there, back)
	if err != nil {
		t.Fatalf("%T to %v and back to %v: %v", obj, via, back, err)
	}
	if !apiequality.Semantic.DeepEqual(there, thereBefore) {
		t.Fatalf("converting %v to %v modified its input:\n%s", via, back, cmp.Diff(thereBefore, there))
	}
	again.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if !apiequality.Semantic.DeepEqual(before, again) {
		t.Fatalf("%T changed through %v (-before +after):\n%s", obj, via, cmp.Diff(before, again))
	}
}
