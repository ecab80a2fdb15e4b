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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// TestV1alpha1ObjectsOfThePreviousRelease: the previous release stored a v1alpha1 object as
// stock nginx:1.27.4 as root on its port; this release's v1alpha1 means the unprivileged
// default image. Such an object reads back through v1alpha1 as it was written, keeps
// its image through writes of this release's v1alpha1, and becomes a plain v1alpha1 object
// once image and ports are dropped through v1alpha2 (the move the upgrade notes give).
// During the upgrade window, the previous release reads and writes this release's
// v1alpha1 objects without changing them.
func TestV1alpha1ObjectsOfThePreviousRelease(t *testing.T) {
	release, binary := previousReleaseBinary(t)
	ctx := timeout(t)
	current := startServer(t, t.TempDir())
	old := startBinaryServerOf(t, binary, t.TempDir(), "--etcd-servers", current.EtcdURL)
	const namespace = "v1alpha1-image"
	oldV1 := old.Client.OperatorV1alpha1().NginxOperators(namespace)
	v1, v2 := current.Client.OperatorV1alpha1().NginxOperators(namespace), current.Client.OperatorV1alpha2().NginxOperators(namespace)

	written := v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](8080), Replicas: ptr.To[int32](2)}
	if _, err := oldV1.Create(ctx, &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "stock"}, Spec: written}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stored, err := v2.Get(ctx, "stock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Spec.Image != "nginx:1.27.4" || stored.Spec.Ports[0].ContainerPort != 8080 || stored.Spec.Service.Ports[0].Port != 8080 || stored.Spec.SecurityContext != nil {
		t.Fatalf("created through v1alpha1 of %s: %+v; this test expects stock nginx on the port, without a security context", release.Version, stored.Spec)
	}

	got, err := v1.Get(ctx, "stock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(written, got.Spec); diff != "" || !strings.Contains(got.Annotations[operator.PreservedFieldsAnnotation], `"image":"nginx:1.27.4"`) {
		t.Errorf("read through v1alpha1: annotations %v, spec (-written +read):\n%s", got.Annotations, diff)
	}
	got.Spec.ForceRedploy = "through v1alpha1"
	if _, err := v1.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := v2.Get(ctx, "stock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := stored.Spec.DeepCopy()
	want.ForceRedeploy = "through v1alpha1"
	if diff := cmp.Diff(*want, after.Spec); diff != "" {
		t.Errorf("after a v1alpha1 update (-want +got):\n%s", diff)
	}

	if _, err := v2.Patch(ctx, "stock", types.MergePatchType, []byte(`{"spec":{"image":null,"ports":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	moved, err := v2.Get(ctx, "stock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Spec.Image != v1alpha2.DefaultImage || moved.Spec.Ports[0].ContainerPort != 8080 || moved.Spec.Service.Ports[0].Port != 8080 ||
		moved.Spec.Pod == nil || moved.Spec.Pod.SecurityContext == nil || !*moved.Spec.Pod.SecurityContext.RunAsNonRoot {
		t.Errorf("after dropping image and ports: %+v", moved.Spec)
	}
	if got, err = v1.Get(ctx, "stock", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	written.ForceRedploy = "through v1alpha1"
	if diff := cmp.Diff(written, got.Spec); diff != "" || len(got.Annotations) != 0 {
		t.Errorf("read through v1alpha1 after dropping image and ports: annotations %v, spec (-want +got):\n%s", got.Annotations, diff)
	}

	// Created through this release's v1alpha1, read and written back through the previous
	// release's, which reads port from the container (8080) and keeps the rest in the
	// annotation: nothing changes but what it wrote.
	if _, err := v1.Create(ctx, &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "unprivileged"},
		Spec: v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](80), Replicas: ptr.To[int32](1)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created, err := v2.Get(ctx, "unprivileged", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	viaOld, err := oldV1.Get(ctx, "unprivileged", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(viaOld.Annotations[operator.PreservedFieldsAnnotation], v1alpha2.DefaultImage) {
		t.Errorf("read through v1alpha1 of %s: annotations %v, want the default image in them", release.Version, viaOld.Annotations)
	}
	viaOld.Spec.Replicas = ptr.To[int32](3)
	if _, err := oldV1.Update(ctx, viaOld, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if after, err = v2.Get(ctx, "unprivileged", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	want = created.Spec.DeepCopy()
	want.Replicas = ptr.To[int32](3)
	if diff := cmp.Diff(*want, after.Spec); diff != "" {
		t.Errorf("after a v1alpha1 update through %s (-want +got):\n%s", release.Version, diff)
	}
}
