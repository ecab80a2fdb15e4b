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

package integration

import (
	"bytes"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestCBORFollowsItsFeatureGate: like kube-apiserver, the server speaks application/cbor
// only with --feature-gates=CBORServingAndStorage=true (alpha, off by default); then
// create, get and list work in CBOR in both versions.
func TestCBORFollowsItsFeatureGate(t *testing.T) {
	const cborType = runtime.ContentTypeCBOR
	path := func(s *server, version string) string {
		return s.URL("/apis/" + v1alpha2.GroupName + "/" + version + "/namespaces/" + ns + "/nginxoperators")
	}

	t.Run("off by default", func(t *testing.T) {
		s := startServer(t, t.TempDir())
		admin := s.httpClient(false)
		if resp := get(t, admin, path(s, "v1alpha2"), cborType); resp.StatusCode != http.StatusNotAcceptable {
			t.Errorf("CBOR-only Accept: status %d, want 406", resp.StatusCode)
		}
		body := encodeAs(t, cborType, v1alpha2.SchemeGroupVersion, richObject("cbor"))
		req, _ := http.NewRequest(http.MethodPost, path(s, "v1alpha2"), bytes.NewReader(body))
		req.Header.Set("Content-Type", cborType)
		resp, err := admin.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("CBOR body: status %d, want 415", resp.StatusCode)
		}
	})

	t.Run("on with the feature gate", func(t *testing.T) {
		// The binary: the libraries read the gate from one process-wide feature gate.
		s := startBinaryServer(t, t.TempDir(), "--feature-gates=CBORServingAndStorage=true")
		admin := s.httpClient(false)
		for _, tc := range []struct {
			version string
			obj     runtime.Object
		}{
			{"v1alpha2", richObject("cbor-v1alpha2")},
			{"v1alpha1", &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "cbor-v1alpha1"}, Spec: v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](8080)}}},
		} {
			gv := v1alpha2.SchemeGroupVersion
			gv.Version = tc.version
			name := tc.obj.(metav1.Object).GetName()
			code, obj := call(t, admin, http.MethodPost, path(s, tc.version), cborType, cborType, encodeAs(t, cborType, gv, tc.obj))
			if created := mustBe[metav1.Object](t, "create", code, http.StatusCreated, obj); created.GetName() != name || created.GetUID() == "" {
				t.Errorf("created %+v", obj)
			}
			code, obj = call(t, admin, http.MethodGet, path(s, tc.version)+"/"+name, "", cborType, nil)
			if obj.GetObjectKind().GroupVersionKind() != gv.WithKind("NginxOperator") {
				t.Errorf("get: %d %v", code, obj.GetObjectKind().GroupVersionKind())
			}
			mustBe[metav1.Object](t, "get", code, http.StatusOK, obj)
		}
		code, obj := call(t, admin, http.MethodGet, path(s, "v1alpha2"), "", cborType, nil)
		if list := mustBe[*v1alpha2.NginxOperatorList](t, "list", code, http.StatusOK, obj); len(list.Items) != 2 || list.Items[0].Spec.Image == "" {
			t.Errorf("list = %+v", list.Items)
		}
		code, obj = call(t, admin, http.MethodPost, path(s, "v1alpha2"), cborType, cborType, []byte{0xd9, 0xd9, 0xf7, 0xbf, 0xff, 0x00})
		mustBe[*metav1.Status](t, "bad CBOR body", code, http.StatusBadRequest, obj)
	})
}
