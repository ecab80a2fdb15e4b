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

package nginxoperator

import (
	"context"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/example/nginx-operator/pkg/apis/operator"
	operatorfuzzer "github.com/example/nginx-operator/pkg/apis/operator/fuzzer"
	"github.com/example/nginx-operator/pkg/apis/operator/install"
)

// neverOwned are the fields server-side apply never records ownership of (its
// stripMeta manager), so a strategy may set them without declaring them reset.
var neverOwned = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

type resetStrategy interface {
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}

// TestResetFieldsMatchWhatPrepareForUpdateDiscards fuzzes updates and checks, in
// every served version, both directions: whatever PrepareForUpdate throws away is
// declared reset (or server-side apply records ownership of a value that was never
// stored), and every declared reset field keeps its stored value (or appliers lose
// ownership of fields they did write).
func TestResetFieldsMatchWhatPrepareForUpdateDiscards(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	seed := rand.Int63()
	t.Logf("fuzz seed %d", seed)
	fill := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, operatorfuzzer.Funcs), rand.NewSource(seed), serializer.NewCodecFactory(scheme))
	main := NewStrategy(scheme, nil)
	for name, strategy := range map[string]resetStrategy{"main resource": main, "status": NewStatusStrategy(main)} {
		t.Run(name, func(t *testing.T) {
			reset := strategy.GetResetFields()
			discarded := map[fieldpath.APIVersion]*fieldpath.Set{}
			for i := 0; i < 300; i++ {
				old, sent := &operator.NginxOperator{}, &operator.NginxOperator{}
				fill.Fill(old)
				fill.Fill(sent)
				stored := sent.DeepCopy()
				strategy.PrepareForUpdate(context.Background(), stored, old)
				for _, v := range servedVersions {
					version := fieldpath.APIVersion(v)
					dropped := changedFields(t, scheme, v, sent, stored)
					if undeclared := dropped.RecursiveDifference(reset[version]); !undeclared.Empty() {
						t.Fatalf("%s: PrepareForUpdate discarded %s, which is not declared reset (reset: %s)", v, undeclared, reset[version])
					}
					// A field declared reset keeps its stored value whatever was sent.
					written := changedFields(t, scheme, v, old, stored)
					if declared := written.Difference(written.RecursiveDifference(reset[version])); !declared.Empty() {
						t.Fatalf("%s: %s is declared reset, but PrepareForUpdate let a new value through", v, declared)
					}
					if discarded[version] == nil {
						discarded[version] = fieldpath.NewSet()
					}
					discarded[version] = discarded[version].Union(dropped)
				}
			}
			for _, v := range servedVersions {
				version := fieldpath.APIVersion(v)
				if reset[version] == nil {
					t.Errorf("%s: no reset fields declared", v)
					continue
				}
				reset[version].Iterate(func(p fieldpath.Path) {
					if !discarded[version].Has(p) && discarded[version].WithPrefix(p[0]).Empty() {
						t.Errorf("%s: %s is declared reset, but PrepareForUpdate never discarded anything there", v, p)
					}
				})
			}
		})
	}
}

// changedFields lists the fields of version, other than those never owned, that
// differ between two objects.
func changedFields(t *testing.T, scheme *runtime.Scheme, version string, a, b *operator.NginxOperator) *fieldpath.Set {
	t.Helper()
	gv, err := schema.ParseGroupVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	before, after := wireForm(t, scheme, gv, a), wireForm(t, scheme, gv, b)
	cmp, err := before.Compare(after)
	if err != nil {
		t.Fatal(err)
	}
	return cmp.Modified.Union(cmp.Added).Union(cmp.Removed).RecursiveDifference(neverOwned)
}

func wireForm(t *testing.T, scheme *runtime.Scheme, gv schema.GroupVersion, o *operator.NginxOperator) *typed.TypedValue {
	t.Helper()
	versioned, err := scheme.ConvertToVersion(o.DeepCopy(), gv)
	if err != nil {
		t.Fatal(err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
	if err != nil {
		t.Fatal(err)
	}
	// v1alpha1 carries, in this annotation, the v1alpha2 form of the spec and status
	// fields it cannot express. It is not a field of its own: the fields it carries
	// are checked in v1alpha2.
	if meta, ok := u["metadata"].(map[string]interface{}); ok {
		if annotations, ok := meta["annotations"].(map[string]interface{}); ok {
			delete(annotations, operator.PreservedFieldsAnnotation)
			if len(annotations) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	tv, err := typed.DeducedParseableType.FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	return tv
}
