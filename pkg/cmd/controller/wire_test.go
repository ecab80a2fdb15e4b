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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// recordedRequest is what the fake API server saw of one resource request.
type recordedRequest struct {
	method, path, contentType, accept string
}

// fakeAPIServer serves just enough discovery for the manager's REST mapper and answers
// every resource request with 404, recording its Content-Type and Accept.
type fakeAPIServer struct {
	mu       sync.Mutex
	requests []recordedRequest
}

var discovery = map[string]any{
	"/api": metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
	"/apis": metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{
		{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}},
		{Name: "policy", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "policy/v1", Version: "v1"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "policy/v1", Version: "v1"}},
		{Name: v1alpha2.GroupName, Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: v1alpha2.SchemeGroupVersion.String(), Version: "v1alpha2"}}, PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: v1alpha2.SchemeGroupVersion.String(), Version: "v1alpha2"}},
	}},
	"/api/v1":         resourceList("v1", "services", "Service", "configmaps", "ConfigMap", "secrets", "Secret", "pods", "Pod"),
	"/apis/apps/v1":   resourceList("apps/v1", "deployments", "Deployment"),
	"/apis/policy/v1": resourceList("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget"),
	"/apis/" + v1alpha2.SchemeGroupVersion.String(): resourceList(v1alpha2.SchemeGroupVersion.String(), "nginxoperators", "NginxOperator"),
}

// resourceList lists namespaced resources given as pairs of resource and kind.
func resourceList(groupVersion string, resourcesAndKinds ...string) metav1.APIResourceList {
	verbs := metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"}
	list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: groupVersion}
	for i := 0; i+1 < len(resourcesAndKinds); i += 2 {
		resource, kind := resourcesAndKinds[i], resourcesAndKinds[i+1]
		list.APIResources = append(list.APIResources,
			metav1.APIResource{Name: resource, Namespaced: true, Kind: kind, Verbs: verbs},
			metav1.APIResource{Name: resource + "/status", Namespaced: true, Kind: kind, Verbs: metav1.Verbs{"get", "update", "patch"}})
	}
	return list
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	if doc, ok := discovery[r.URL.Path]; ok {
		_ = json.NewEncoder(w).Encode(doc)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, recordedRequest{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Accept")})
	s.mu.Unlock()
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
}

// TestManagerClientsSpeakProtobuf sends the controller's kinds of request through the
// clients NewManager builds and checks each asked for protobuf and sent a protobuf body.
func TestManagerClientsSpeakProtobuf(t *testing.T) {
	fake := &fakeAPIServer{}
	server := httptest.NewServer(fake)
	defer server.Close()
	mgr, err := NewManager(&rest.Config{Host: server.URL}, &Options{MetricsAddr: "0", ProbeAddr: "0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	meta := metav1.ObjectMeta{Namespace: "default", Name: "web"}
	key := client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}
	reader, c := mgr.GetAPIReader(), mgr.GetClient()
	for _, call := range []struct {
		name string
		err  error
	}{
		{"get NginxOperator", reader.Get(ctx, key, &v1alpha2.NginxOperator{})},
		{"get Deployment", reader.Get(ctx, key, &appsv1.Deployment{})},
		{"get Service", reader.Get(ctx, key, &corev1.Service{})},
		{"update NginxOperator status", c.Status().Update(ctx, &v1alpha2.NginxOperator{ObjectMeta: meta})},
		{"update Deployment", c.Update(ctx, &appsv1.Deployment{ObjectMeta: meta})},
		{"update Service", c.Update(ctx, &corev1.Service{ObjectMeta: meta})},
	} {
		if !apierrors.IsNotFound(call.err) {
			t.Errorf("%s: %v, want the fake server's NotFound", call.name, call.err)
		}
	}

	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.requests) != 6 {
		t.Fatalf("requests = %+v, want 6", fake.requests)
	}
	for _, r := range fake.requests {
		if r.accept != protobufAccept {
			t.Errorf("%s %s: Accept %q, want %q", r.method, r.path, r.accept, protobufAccept)
		}
		if r.method == http.MethodPut && r.contentType != runtime.ContentTypeProtobuf {
			t.Errorf("%s %s: Content-Type %q, want protobuf", r.method, r.path, r.contentType)
		}
	}
	for _, resource := range []string{"/nginxoperators/web/status", "/deployments/web", "/services/web"} {
		if !strings.Contains(fmt.Sprint(fake.requests), resource) {
			t.Errorf("no request for %s in %+v", resource, fake.requests)
		}
	}
}
