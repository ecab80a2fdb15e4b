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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestExporterImage(t *testing.T) {
	own := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "nginx-operator-system", Name: "controller-abc"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup", Image: "setup:1"}, {Name: "nginx-exporter", Image: "registry.example.com/nginx-operator/nginx-exporter:v0.2.0@sha256:0123"}},
			Containers:     []corev1.Container{{Name: "controller", Image: "registry.example.com/nginx-operator:v0.2.0"}}}}
	// An older manifest, whose Pod names no exporter image.
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "nginx-operator-system", Name: "controller-old"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: "registry.example.com/nginx-operator:v0.1.0"}}}}
	reader := fake.NewClientBuilder().WithObjects(own, old).Build()
	ctx := context.Background()

	if got, err := exporterImage(ctx, reader, "mirror.example.com/op:v1"); err != nil || got != "mirror.example.com/op:v1" {
		t.Errorf("with the flag: %q, %v", got, err)
	}
	t.Setenv("POD_NAMESPACE", "")
	t.Setenv("POD_NAME", "")
	if got, err := exporterImage(ctx, reader, ""); err != nil || got != DefaultExporterImage() || !strings.HasPrefix(got, "localhost/nginx-operator/nginx-exporter:v") {
		t.Errorf("outside a pod: %q, %v", got, err)
	}
	t.Setenv("POD_NAMESPACE", "nginx-operator-system")
	t.Setenv("POD_NAME", "controller-abc")
	if got, err := exporterImage(ctx, reader, ""); err != nil || got != "registry.example.com/nginx-operator/nginx-exporter:v0.2.0@sha256:0123" {
		t.Errorf("in its pod: %q, %v", got, err)
	}
	t.Setenv("POD_NAME", "controller-old")
	if _, err := exporterImage(ctx, reader, ""); err == nil || !strings.Contains(err.Error(), `no init container "nginx-exporter"`) || !strings.Contains(err.Error(), "--exporter-image") {
		t.Errorf("own pod without the init container: %v", err)
	}
	t.Setenv("POD_NAME", "gone")
	if _, err := exporterImage(ctx, reader, ""); err == nil || !strings.Contains(err.Error(), "--exporter-image") {
		t.Errorf("own pod not readable: %v", err)
	}
}
