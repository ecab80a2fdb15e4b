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

package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"

	"github.com/example/nginx-operator/pkg/apis/operator"
	operatorfuzzer "github.com/example/nginx-operator/pkg/apis/operator/fuzzer"
	"github.com/example/nginx-operator/pkg/apis/operator/install"
)

// FuzzValidate runs defaulting and every validation entry point (create, update, status
// update) on objects made from the fuzz bytes in two ways: decoded as a JSON request
// body to each served version (so defaulted as the server defaults), and filled from the
// bytes by the group's fuzzer functions. Nothing may panic, and every error must carry
// the field path it is about and a message, so the 422 the server builds from the list
// tells the user what to fix.
func FuzzValidate(f *testing.F) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := runtimeserializer.NewCodecFactory(scheme)
	hub := schema.GroupVersion{Group: operator.GroupName, Version: runtime.APIVersionInternal}
	decoder := codecs.DecoderToVersion(codecs.UniversalDeserializer(), hub)
	versions := scheme.PrioritizedVersionsForGroup(operator.GroupName)
	funcs := fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, operatorfuzzer.Funcs)(codecs)

	for _, seed := range []string{
		`{}`,
		`{"spec":{"image":"   ","replicas":0}}`,
		`{"metadata":{"name":"web"},"spec":{"image":"nginx","ports":[{"name":"http","containerPort":80}]}}`,
		`{"metadata":{"name":"Web/1"},"spec":{"image":" x","replicas":-1,"qps":{"singlePodQPS":0,"totalQPS":-5}}}`,
		`{"spec":{"ports":[{"name":"a","containerPort":70000,"hostPort":-1,"hostIP":"x","protocol":"ICMP"},{"name":"a","containerPort":70000}]}}`,
		`{"spec":{"service":{"type":"NodePort","ports":[{"name":"nope","port":0,"nodePort":1},{"name":"nope","nodePort":1}]}}}`,
		`{"spec":{"resources":{"limits":{"hugepages-0":"1","example.com/gpu":"1.5"},"requests":{"hugepages-2Mi":"3","cpu":"-1"},"claims":[{"name":"c"}]}}}`,
		`{"spec":{"env":[{"name":"","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['a']"},"resourceFieldRef":{"resource":"limits.hugepages-x","divisor":"3"}}}]}}`,
		`{"status":{"replicas":1,"readyReplicas":2,"availableReplicas":3,"selector":"a in (","realQPS":-1,"conditions":[{"type":""}]}}`,
		`{"apiVersion":"operator.example.com/v1alpha1","kind":"NginxOperator","metadata":{"annotations":{"operator.example.com/v1alpha2-fields":"{\"spec\":{\"qps\":{\"singlePodQPS\":-1}}}"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var objects []*operator.NginxOperator
		for _, gv := range versions {
			defaultGVK := gv.WithKind("NginxOperator")
			if obj, _, err := decoder.Decode(data, &defaultGVK, &operator.NginxOperator{}); err == nil {
				if decoded, ok := obj.(*operator.NginxOperator); ok {
					objects = append(objects, decoded)
				}
			}
		}
		filler := randfill.NewFromGoFuzz(data).NilChance(.3).NumElements(0, 3).Funcs(funcs...)
		filled := &operator.NginxOperator{}
		filler.Fill(filled)
		objects = append(objects, filled)

		for _, obj := range objects {
			old := filled
			assertErrorsExplainThemselves(t, "create", ValidateNginxOperator(obj))
			assertErrorsExplainThemselves(t, "update", ValidateNginxOperatorUpdate(obj, old))
			assertErrorsExplainThemselves(t, "update to itself", ValidateNginxOperatorUpdate(obj, obj.DeepCopy()))
			assertErrorsExplainThemselves(t, "status update", ValidateNginxOperatorStatusUpdate(obj, old))
		}
	})
}

// assertErrorsExplainThemselves requires a field path, a known error type and a message
// for every error, and a 422 the server can build from the list.
func assertErrorsExplainThemselves(t *testing.T, what string, errs field.ErrorList) {
	t.Helper()
	for _, err := range errs {
		if !strings.HasPrefix(err.Field, "metadata") && !strings.HasPrefix(err.Field, "spec") && !strings.HasPrefix(err.Field, "status") {
			t.Errorf("%s: error without a field path into the object: %v", what, err)
		}
		if err.Type.String() == "" || err.Error() == "" {
			t.Errorf("%s: error of unknown type or without a message: %#v", what, err)
		}
	}
	if len(errs) == 0 {
		return
	}
	status := apierrors.NewInvalid(operator.Kind("NginxOperator"), "fuzzed", errs).Status()
	if status.Code != 422 || status.Details == nil || len(status.Details.Causes) != len(errs) {
		t.Errorf("%s: %d errors make the status %+v", what, len(errs), status)
	}
}
