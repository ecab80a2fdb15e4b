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

package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Format is a wire format a client asks for (Accept) and sends (Content-Type).
type Format struct {
	Name      string
	MediaType string
}

var allFormats = []Format{
	{"json", runtime.ContentTypeJSON},
	{"protobuf", runtime.ContentTypeProtobuf},
	{"cbor", runtime.ContentTypeCBOR},
}

// Server names the processes whose CPU and heap are measured.
const (
	kubeAPIServer     = "kube-apiserver"
	etcdServer        = "etcd"
	operatorAPIServer = "nginx-operator-apiserver"
)

// Target is one way to serve the same API: a CRD in kube-apiserver, our API through
// kube-apiserver's aggregator, or our apiserver called directly. Each keeps its objects
// in its own namespace, so a namespaced list returns only that target's objects.
type Target struct {
	Name  string // crd, aggregated, direct: keys of the JSON
	Title string
	Host  string
	// CAFile verifies the server: the cluster CA, or our apiserver's own CA.
	CAFile    string
	GV        schema.GroupVersion
	Resource  string
	Kind      string
	Namespace string
	// Typed targets decode into our Go types; the CRD into unstructured maps, which is
	// what a client of a CRD gets.
	Typed bool
	// Stores names the server that keeps the objects (and whose heap grows with them).
	Stores string
	// Small targets create small objects: image, replicas and one port.
	Small bool
}

// withSmallObjects copies targets into namespaces of their own for small objects.
func withSmallObjects(targets []*Target) []*Target {
	var out []*Target
	for _, t := range targets {
		small := *t
		small.Namespace += "-small"
		small.Small = true
		out = append(out, &small)
	}
	return out
}

// newTargets describes the three targets of a running stack; crd is the group,
// version, resource and kind of the benchmark CRD.
func newTargets(localDir string, kubePort, operatorPort int, crd schema.GroupVersionResource, crdKind string) []*Target {
	pki := filepath.Join(localDir, "pki")
	kube := fmt.Sprintf("https://127.0.0.1:%d", kubePort)
	return []*Target{
		{Name: "crd", Title: "CRD in kube-apiserver", Host: kube, CAFile: filepath.Join(pki, "ca.crt"),
			GV: crd.GroupVersion(), Resource: crd.Resource, Kind: crdKind, Namespace: "bench-crd", Stores: kubeAPIServer},
		{Name: "aggregated", Title: "our API through kube-apiserver (aggregation)", Host: kube, CAFile: filepath.Join(pki, "ca.crt"),
			GV: v1alpha2.SchemeGroupVersion, Resource: "nginxoperators", Kind: "NginxOperator", Namespace: "bench-aggregated", Typed: true, Stores: operatorAPIServer},
		{Name: "direct", Title: "our apiserver directly", Host: fmt.Sprintf("https://127.0.0.1:%d", operatorPort), CAFile: filepath.Join(pki, "nginx-operator-ca.crt"),
			GV: v1alpha2.SchemeGroupVersion, Resource: "nginxoperators", Kind: "NginxOperator", Namespace: "bench-direct", Typed: true, Stores: operatorAPIServer},
	}
}

// typedCodecs decodes our API's versioned types in every format the library has,
// CBOR included (NewCodecFactory leaves it out unless asked).
var typedCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme, serializer.WithSerializer(cbor.NewSerializerInfo))
}()

// restConfig is the benchmark user's configuration for one target and format: only that format
// is accepted and sent, so a server that does not serve it answers 406/415 instead of
// silently falling back to JSON. Compression is client-go's default (on) for every target:
// kube-apiserver's aggregation proxy asks our apiserver for gzip whatever the client
// asks, so with gzip off only the direct target sent large lists uncompressed, and that
// made it slower than the aggregated path (10k protobuf p50 108 ms direct vs 83 ms
// aggregated; with gzip 62 vs 77 ms). The transport decompresses, so the body length is
// still the encoding's own size.
func (t *Target) restConfig(localDir string, f Format) *rest.Config {
	certFile, keyFile := benchIdentity(localDir)
	gv := t.GV
	cfg := &rest.Config{
		Host:    t.Host,
		APIPath: "/apis",
		TLSClientConfig: rest.TLSClientConfig{
			CAFile:   t.CAFile,
			CertFile: certFile,
			KeyFile:  keyFile,
		},
		RateLimiter: flowcontrol.NewFakeAlwaysRateLimiter(),
		Timeout:     2 * time.Minute,
	}
	if t.Typed {
		cfg.NegotiatedSerializer = typedCodecs.WithoutConversion()
	} else {
		// The dynamic client's own serializer: unstructured objects in JSON or CBOR.
		cfg = dynamic.ConfigFor(cfg)
	}
	cfg.GroupVersion = &gv
	cfg.ContentType = f.MediaType
	cfg.AcceptContentTypes = f.MediaType
	return cfg
}

// clientSupports reports whether the client side can encode and decode the format at
// all (the CRD's unstructured serializer has no protobuf).
func clientSupports(cfg *rest.Config, f Format) bool {
	for _, info := range cfg.NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType == f.MediaType {
			return true
		}
	}
	return false
}

// newRESTClient returns a client with its own HTTP transport, hence its own keep-alive
// connection: the concurrent clients of a scenario do not share one HTTP/2 connection.
func newRESTClient(cfg *rest.Config) (*rest.RESTClient, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	transport := &http.Transport{
		TLSClientConfig:     tlsConfig,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		// Asks for gzip and decompresses transparently, as client-go's own transport does.
		DisableCompression: cfg.DisableCompression,
	}
	return rest.RESTClientForConfigAndClient(cfg, &http.Client{Transport: transport, Timeout: cfg.Timeout})
}

// newObject is the benchmark object: the shape of artifacts/samples/v1alpha2-web.yaml
// with one replica and a ClusterIP Service. The CRD gets the same fields as unstructured.
func (t *Target) newObject(name string) (runtime.Object, error) {
	replicas := int32(1)
	obj := &v1alpha2.NginxOperator{
		TypeMeta:   metav1.TypeMeta{APIVersion: t.GV.String(), Kind: t.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: t.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "bench"}},
		Spec:       benchSpec(&replicas),
	}
	if t.Small {
		obj.Spec = smallSpec(&replicas)
	}
	if t.Typed {
		return obj, nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}

// newItem and newList are what a get and a list decode into.
func (t *Target) newItem() runtime.Object {
	if t.Typed {
		return &v1alpha2.NginxOperator{}
	}
	return &unstructured.Unstructured{}
}

func (t *Target) newList() runtime.Object {
	if t.Typed {
		return &v1alpha2.NginxOperatorList{}
	}
	return &unstructured.UnstructuredList{}
}
