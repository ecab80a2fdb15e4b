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
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// benchmarkList is a list of n typical objects: the shape a LIST response carries.
func benchmarkList(n int) *v1alpha2.NginxOperatorList {
	list := &v1alpha2.NginxOperatorList{ListMeta: metav1.ListMeta{ResourceVersion: "123456"}}
	for i := range n {
		list.Items = append(list.Items, v1alpha2.NginxOperator{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default", UID: "6f1c2a3e-5b0d-4c1e-9f2a-0123456789ab",
				ResourceVersion: "123456", Generation: 2, Labels: map[string]string{"tier": "edge"}, CreationTimestamp: metav1.Now()},
			Spec: v1alpha2.NginxOperatorSpec{
				Image: "nginx:1.27", Replicas: ptr.To[int32](2),
				Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				Service:   &v1alpha2.ServiceSpec{Type: v1alpha2.ServiceTypeClusterIP, Ports: []v1alpha2.ServicePort{{Name: "http", Port: 80}}},
			},
			Status: v1alpha2.NginxOperatorStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, Selector: "app=web",
				Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastTransitionTime: metav1.Now(), ObservedGeneration: 2}}},
		})
	}
	return list
}

// BenchmarkWireFormats encodes and decodes a 1000-object list in each media type the
// server can speak (CBOR only behind its feature gate) and reports the body size.
//
//	go test ./pkg/apis/operator/install -run '^$' -bench WireFormats
func BenchmarkWireFormats(b *testing.B) {
	scheme := newScheme()
	codecs := serializer.NewCodecFactory(scheme, serializer.WithSerializer(cbor.NewSerializerInfo))
	list := benchmarkList(1000)
	list.SetGroupVersionKind(v1alpha2.SchemeGroupVersion.WithKind("NginxOperatorList"))
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf, runtime.ContentTypeCBOR} {
		info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			b.Fatalf("no serializer for %s", mediaType)
		}
		data, err := runtime.Encode(info.Serializer, list)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(mediaType+"/encode", func(b *testing.B) {
			for b.Loop() {
				if _, err := runtime.Encode(info.Serializer, list); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data)), "bytes")
		})
		b.Run(mediaType+"/decode", func(b *testing.B) {
			for b.Loop() {
				if _, _, err := info.Serializer.Decode(data, nil, &v1alpha2.NginxOperatorList{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
