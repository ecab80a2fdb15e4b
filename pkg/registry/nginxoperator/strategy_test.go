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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

func sample() *operator.NginxOperator {
	return &operator.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 3, ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
		Spec: operator.NginxOperatorSpec{
			Image:    "nginx:1.27.4",
			Replicas: ptr.To[int32](2),
			Ports:    []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Service:  &operator.ServiceSpec{Type: operator.ServiceTypeClusterIP, Ports: []operator.ServicePort{{Name: "http", Port: 80}}},
		},
		Status: operator.NginxOperatorStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, Selector: "app=web"},
	}
}

func TestPrepareForCreateDropsStatus(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), nil)
	o := sample()
	s.PrepareForCreate(context.Background(), o)
	if o.Generation != 1 || o.Status.Replicas != 0 || o.Status.Selector != "" {
		t.Errorf("after PrepareForCreate generation=%d status=%+v; want 1 and empty status", o.Generation, o.Status)
	}
}

func TestPrepareForUpdate(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), nil)
	ctx := context.Background()

	metaOnly := sample()
	metaOnly.Labels = map[string]string{"c": "d"}
	metaOnly.Status = operator.NginxOperatorStatus{}
	s.PrepareForUpdate(ctx, metaOnly, sample())
	if metaOnly.Generation != 3 {
		t.Errorf("metadata-only update moved generation to %d", metaOnly.Generation)
	}
	if metaOnly.Status.Replicas != 2 {
		t.Errorf("main resource update changed status: %+v", metaOnly.Status)
	}

	specChange := sample()
	specChange.Spec.Replicas = ptr.To[int32](5)
	s.PrepareForUpdate(ctx, specChange, sample())
	if specChange.Generation != 4 {
		t.Errorf("spec change left generation at %d, want 4", specChange.Generation)
	}
}

func TestStatusPrepareForUpdateKeepsSpecAndMetadata(t *testing.T) {
	s := NewStatusStrategy(NewStrategy(runtime.NewScheme(), nil))
	o := sample()
	o.Spec.Replicas = ptr.To[int32](9)
	o.Labels = map[string]string{"x": "y"}
	o.Status.ReadyReplicas = 1
	s.PrepareForUpdate(context.Background(), o, sample())
	if *o.Spec.Replicas != 2 || o.Labels["a"] != "b" {
		t.Errorf("status update changed spec or labels: replicas=%d labels=%v", *o.Spec.Replicas, o.Labels)
	}
	if o.Status.ReadyReplicas != 1 || o.Generation != 3 {
		t.Errorf("status update lost status or moved generation: %+v gen=%d", o.Status, o.Generation)
	}
}

func TestResetFields(t *testing.T) {
	main := NewStrategy(runtime.NewScheme(), nil)
	status := NewStatusStrategy(main)
	for _, v := range servedVersions {
		if got := main.GetResetFields()[fieldpath.APIVersion(v)].String(); got != ".status" {
			t.Errorf("%s: main resource resets %q, want .status", v, got)
		}
		want := fieldpath.NewSet(fieldpath.MakePathOrDie("metadata"), fieldpath.MakePathOrDie("spec"))
		if got := status.GetResetFields()[fieldpath.APIVersion(v)]; got == nil || !got.Equals(want) {
			t.Errorf("%s: status resets %v, want %v", v, got, want)
		}
	}
}
