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
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
)

// wireCodecs encode and decode request and response bodies as a client does: our versions,
// autoscaling/v1 for /scale, and the meta types (Status, WatchEvent); JSON, protobuf and CBOR.
var wireCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	if err := autoscalingv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme, serializer.WithSerializer(cbor.NewSerializerInfo))
}()

func wireSerializer(t *testing.T, mediaType string) runtime.SerializerInfo {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(wireCodecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no serializer for %s", mediaType)
	}
	return info
}

// encodeAs encodes obj in gv for the media type.
func encodeAs(t *testing.T, mediaType string, gv schema.GroupVersion, obj runtime.Object) []byte {
	t.Helper()
	data, err := runtime.Encode(wireCodecs.EncoderForVersion(wireSerializer(t, mediaType).Serializer, gv), obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// call sends body with contentType (none when body is nil), asks for accept, and returns
// the status and the decoded response; the response must come in the accepted media type.
func call(t *testing.T, c *http.Client, method, url, contentType, accept string, body []byte) (int, runtime.Object) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("Content-Type"); got != accept {
		t.Fatalf("%s %s: status %d, Content-Type %q, want %q: %q", method, url, resp.StatusCode, got, accept, data)
	}
	obj, _, err := wireSerializer(t, accept).Serializer.Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("%s %s: status %d, undecodable %s body: %v", method, url, resp.StatusCode, accept, err)
	}
	return resp.StatusCode, obj
}

func mustBe[T any](t *testing.T, what string, code, wantCode int, obj runtime.Object) T {
	t.Helper()
	typed, ok := obj.(T)
	if code != wantCode || !ok {
		t.Fatalf("%s: status %d, %T %+v; want %d and %T", what, code, obj, obj, wantCode, *new(T))
	}
	return typed
}

// protobufCase is one version's objects for the raw protobuf test.
type protobufCase struct {
	gv     schema.GroupVersion
	create runtime.Object
	// edit changes the spec of the object read back, withStatus sets a status.
	edit, withStatus func(runtime.Object)
	// statusWritten tells whether the object carries what withStatus set.
	statusWritten func(runtime.Object) bool
}

var protobufCases = []protobufCase{
	{
		gv: v1alpha1.SchemeGroupVersion,
		create: &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "proto-v1alpha1"},
			Spec: v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](8080), Replicas: ptr.To[int32](2)}},
		edit: func(o runtime.Object) { o.(*v1alpha1.NginxOperator).Spec.ForceRedploy = "edited" },
		withStatus: func(o runtime.Object) {
			o.(*v1alpha1.NginxOperator).Status.Conditions = []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: "Proto", LastTransitionTime: metav1.Now()}}
		},
		statusWritten: func(o runtime.Object) bool {
			c := o.(*v1alpha1.NginxOperator).Status.Conditions
			return len(c) == 1 && c[0].Reason == "Proto"
		},
	},
	{
		gv:     v1alpha2.SchemeGroupVersion,
		create: richObject("proto-v1alpha2"),
		edit:   func(o runtime.Object) { o.(*v1alpha2.NginxOperator).Spec.ForceRedeploy = "edited" },
		withStatus: func(o runtime.Object) {
			o.(*v1alpha2.NginxOperator).Status = v1alpha2.NginxOperatorStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 1, Selector: "app=proto",
				Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: "Proto", LastTransitionTime: metav1.Now()}}}
		},
		statusWritten: func(o runtime.Object) bool {
			st := o.(*v1alpha2.NginxOperator).Status
			return st.Selector == "app=proto" && len(st.Conditions) == 1 && st.Conditions[0].Reason == "Proto"
		},
	},
}

// TestProtobufOverRawHTTP speaks application/vnd.kubernetes.protobuf to every endpoint of
// both versions: create, get, update, list, status, scale, patch responses, watch, delete.
func TestProtobufOverRawHTTP(t *testing.T) {
	s, ns := sharedServer(t), namespaceFor(t)
	admin := s.httpClient(false)
	const pb = runtime.ContentTypeProtobuf
	for _, tc := range protobufCases {
		t.Run(tc.gv.Version, func(t *testing.T) {
			name := tc.create.(metav1.Object).GetName()
			collection := s.URL("/apis/" + tc.gv.String() + "/namespaces/" + ns + "/nginxoperators")
			item := collection + "/" + name

			code, obj := call(t, admin, http.MethodPost, collection, pb, pb, encodeAs(t, pb, tc.gv, tc.create))
			created := mustBe[metav1.Object](t, "create", code, http.StatusCreated, obj)
			if obj.GetObjectKind().GroupVersionKind() != tc.gv.WithKind("NginxOperator") || created.GetName() != name {
				t.Fatalf("created %v %s", obj.GetObjectKind().GroupVersionKind(), created.GetName())
			}
			events := watchProtobuf(t, admin, collection+"?watch=true&fieldSelector=metadata.name%3D"+name+"&resourceVersion="+created.GetResourceVersion())

			code, obj = call(t, admin, http.MethodGet, item, "", pb, nil)
			mustBe[metav1.Object](t, "get", code, http.StatusOK, obj)
			tc.edit(obj)
			code, obj = call(t, admin, http.MethodPut, item, pb, pb, encodeAs(t, pb, tc.gv, obj))
			writes := []string{mustBe[metav1.Object](t, "update", code, http.StatusOK, obj).GetResourceVersion()}
			if spec := fmt.Sprintf("%+v", obj); !strings.Contains(spec, "ForceRedploy:edited") && !strings.Contains(spec, "ForceRedeploy:edited") {
				t.Errorf("update did not keep the edit: %s", spec)
			}

			tc.withStatus(obj)
			code, obj = call(t, admin, http.MethodPut, item+"/status", pb, pb, encodeAs(t, pb, tc.gv, obj))
			writes = append(writes, mustBe[metav1.Object](t, "update status", code, http.StatusOK, obj).GetResourceVersion())
			if !tc.statusWritten(obj) {
				t.Errorf("status not written: %+v", obj)
			}

			code, obj = call(t, admin, http.MethodGet, item+"/scale", "", pb, nil)
			scale := mustBe[*autoscalingv1.Scale](t, "get scale", code, http.StatusOK, obj)
			scale.Spec.Replicas = 5
			code, obj = call(t, admin, http.MethodPut, item+"/scale", pb, pb, encodeAs(t, pb, autoscalingv1.SchemeGroupVersion, scale))
			if scale = mustBe[*autoscalingv1.Scale](t, "update scale", code, http.StatusOK, obj); scale.Spec.Replicas != 5 {
				t.Errorf("scale = %+v", scale.Spec)
			}
			writes = append(writes, scale.ResourceVersion)

			// Patch bodies are JSON patch types (merge patch in one version, strategic merge
			// patch in the other); the response is protobuf.
			patchType := "application/merge-patch+json"
			if tc.gv.Version == "v1alpha2" {
				patchType = "application/strategic-merge-patch+json"
			}
			code, obj = call(t, admin, http.MethodPatch, item, patchType, pb, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`))
			patched := mustBe[metav1.Object](t, "patch", code, http.StatusOK, obj)
			if patched.GetLabels()["patched"] != "yes" {
				t.Errorf("patched labels = %v", patched.GetLabels())
			}
			writes = append(writes, patched.GetResourceVersion())

			code, obj = call(t, admin, http.MethodGet, collection, "", pb, nil)
			mustBe[metav1.ListInterface](t, "list", code, http.StatusOK, obj)
			if items, _ := meta.ExtractList(obj); len(items) < 1 {
				t.Errorf("list has no items: %+v", obj)
			}

			// update, status, scale and patch each modified the object, in that order.
			for i, want := range writes {
				select {
				case ev, ok := <-events:
					if !ok {
						t.Fatalf("watch ended after %d events", i)
					}
					got, _ := meta.Accessor(ev.Object)
					if ev.Type != watch.Modified || ev.Object.GetObjectKind().GroupVersionKind() != tc.gv.WithKind("NginxOperator") || got == nil || got.GetResourceVersion() != want {
						t.Errorf("watch event %d: %s %v %+v, want MODIFIED at resourceVersion %s", i, ev.Type, ev.Object.GetObjectKind().GroupVersionKind(), got, want)
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("no watch event %d within 30s", i)
				}
			}

			code, obj = call(t, admin, http.MethodDelete, item, "", pb, nil)
			if code != http.StatusOK {
				t.Errorf("delete: status %d %+v", code, obj)
			}
		})
	}

	t.Run("bad protobuf bodies get 400", func(t *testing.T) {
		collection := s.URL("/apis/" + v1alpha2.SchemeGroupVersion.String() + "/namespaces/" + ns + "/nginxoperators")
		envelope := encodeAs(t, pb, v1alpha2.SchemeGroupVersion, richObject("truncated"))
		for name, body := range map[string][]byte{
			"garbage after the prefix":       append([]byte("k8s\x00"), 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01),
			"truncated object":               envelope[:len(envelope)/2],
			"no prefix":                      []byte("{\"kind\":\"NginxOperator\"}"),
			"a Scale in place of the object": encodeAs(t, pb, autoscalingv1.SchemeGroupVersion, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "scale"}}),
		} {
			code, obj := call(t, admin, http.MethodPost, collection, pb, pb, body)
			if status := mustBe[*metav1.Status](t, name, code, http.StatusBadRequest, obj); status.Code != http.StatusBadRequest {
				t.Errorf("%s: %+v", name, status)
			}
		}
	})
}

// watchProtobuf opens a protobuf watch and delivers its events until the test ends.
func watchProtobuf(t *testing.T, c *http.Client, url string) <-chan watch.Event {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", runtime.ContentTypeProtobuf)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if got := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || got != runtime.ContentTypeProtobuf+";stream=watch" {
		t.Fatalf("watch: status %d, Content-Type %q", resp.StatusCode, got)
	}
	stream := wireSerializer(t, runtime.ContentTypeProtobuf).StreamSerializer
	decoder := restclientwatch.NewDecoder(streaming.NewDecoder(stream.NewFrameReader(resp.Body), stream.Serializer), wireCodecs.UniversalDeserializer())
	events := make(chan watch.Event)
	go func() {
		defer close(events)
		for {
			typ, obj, err := decoder.Decode()
			if err != nil {
				return
			}
			events <- watch.Event{Type: typ, Object: obj}
		}
	}()
	return events
}

// requestLog records the media types of every request a client sends and every response
// it gets.
type requestLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			l.mu.Lock()
			l.entries = append(l.entries, fmt.Sprintf("%s %s body=%q accept=%q response=%q", req.Method, req.URL.Path, req.Header.Get("Content-Type"), req.Header.Get("Accept"), resp.Header.Get("Content-Type")))
			l.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestClientsetSpeaksProtobuf runs the generated clientset against the server and checks
// on the wire that every request and response of both versions was protobuf.
func TestClientsetSpeaksProtobuf(t *testing.T) {
	s, ns := sharedServer(t), namespaceFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := &requestLog{}
	cfg := rest.CopyConfig(s.Config)
	cfg.Wrap(log.wrap)
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	v2 := c.OperatorV1alpha2().NginxOperators(ns)
	w, err := v2.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := v2.Create(ctx, richObject("typed"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added {
			t.Errorf("watch: %s %+v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	created.Spec.ForceRedeploy = "typed"
	updated, err := v2.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated.Status.Replicas = 2
	if _, err := v2.UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	scale, err := v2.GetScale(ctx, "typed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 3
	if _, err := v2.UpdateScale(ctx, "typed", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if list, err := v2.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}

	v1 := c.OperatorV1alpha1().NginxOperators(ns)
	old, err := v1.Get(ctx, "typed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Spec.ForceRedploy = "through v1alpha1"
	if _, err := v1.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if list, err := v1.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Fatalf("v1alpha1 list: %v %v", list, err)
	}
	if err := v1.Delete(ctx, "typed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.entries) < 11 {
		t.Fatalf("recorded %d requests, want 11: %v", len(log.entries), log.entries)
	}
	for _, e := range log.entries {
		bodyOK := !strings.HasPrefix(e, "POST") && !strings.HasPrefix(e, "PUT") || strings.Contains(e, `body="application/vnd.kubernetes.protobuf"`)
		if !bodyOK || !strings.Contains(e, `accept="application/vnd.kubernetes.protobuf,application/json"`) || !strings.Contains(e, `response="application/vnd.kubernetes.protobuf`) {
			t.Errorf("not protobuf: %s", e)
		}
	}
}
