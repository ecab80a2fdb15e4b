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

package controller

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/controller"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// TestApplierAsksForJSON: controller-runtime decodes an apply's response as JSON only,
// so the applies must not ask for the protobuf the manager's other clients ask for.
func TestApplierAsksForJSON(t *testing.T) {
	fake := &fakeAPIServer{}
	server := httptest.NewServer(fake)
	defer server.Close()
	// Even from the protobuf configuration the manager runs with.
	applier, err := newApplier(withProtobuf(&rest.Config{Host: server.URL}), controller.NewScheme(), nil)
	if err != nil {
		t.Fatal(err)
	}
	apply := appsv1ac.Deployment("web", "default")
	// The fake server answers 404; only the request headers matter here.
	_ = applier.Apply(context.Background(), apply, client.FieldOwner(builders.FieldManager))

	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.requests) != 1 {
		t.Fatalf("requests: %+v", fake.requests)
	}
	req := fake.requests[0]
	if req.method != "PATCH" || strings.Contains(req.accept, runtime.ContentTypeProtobuf) || !strings.Contains(req.accept, runtime.ContentTypeJSON) {
		t.Errorf("the apply was %s with Accept %q; want a PATCH that accepts JSON only", req.method, req.accept)
	}
}
