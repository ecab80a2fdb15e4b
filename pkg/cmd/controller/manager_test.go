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
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// TestCachesDropWhatIsNeverRead: the metadata of ConfigMaps and Secrets (every one of the
// cluster) and the nginx pods are cached without managed fields and annotations, which
// anyone may fill; what the controller reads stays.
func TestCachesDropWhatIsNeverRead(t *testing.T) {
	in := metadataOf("Secret")
	in.Name, in.Namespace, in.ResourceVersion = "tls", "shop", "42"
	in.Labels = map[string]string{"app": "web"}
	in.Annotations = map[string]string{"big": string(make([]byte, 256<<10))}
	in.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	in.OwnerReferences = []metav1.OwnerReference{{Kind: "NginxOperator", Name: "web", UID: "u"}}
	out, err := dropUnread(in)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.Annotations != nil || got.ManagedFields != nil {
		t.Errorf("kept annotations %d or managed fields %v", len(got.Annotations), got.ManagedFields)
	}
	if got.Name != "tls" || got.ResourceVersion != "42" || got.Labels["app"] != "web" || len(got.OwnerReferences) != 1 || got.Kind != "Secret" {
		t.Errorf("dropped what the controller reads: %+v", got)
	}
	// A tombstone or anything without metadata passes through.
	if out, err := dropUnread("not an object"); err != nil || out != "not an object" {
		t.Errorf("dropUnread(string) = %v, %v", out, err)
	}
}

// TestCacheConfinedToNamespaces: with --namespaces every cached kind is listed and watched
// in those namespaces only, with its own selectors kept, and a cached read elsewhere fails
// instead of reaching the API server; without it the caches span the cluster.
func TestCacheConfinedToNamespaces(t *testing.T) {
	if got := cacheOptions(NewOptions()); got.DefaultNamespaces != nil {
		t.Errorf("without --namespaces the caches are confined to %v", got.DefaultNamespaces)
	}

	o := NewOptions()
	o.Namespaces = []string{"web", "shop", "web"}
	opts := cacheOptions(o)
	if got := slices.Sorted(maps.Keys(opts.DefaultNamespaces)); !slices.Equal(got, []string{"shop", "web"}) {
		t.Errorf("DefaultNamespaces = %v, want shop and web", got)
	}
	kinds := 0
	for obj, by := range opts.ByObject {
		kinds++
		if by.Namespaces != nil {
			t.Errorf("%T has namespaces of its own (%v): it must inherit DefaultNamespaces", obj, by.Namespaces)
		}
		switch obj.(type) {
		case *appsv1.Deployment, *corev1.Service, *policyv1.PodDisruptionBudget, *corev1.Pod:
			if by.Label == nil || by.Label.String() != builders.ManagedByLabel+"="+builders.FieldManager {
				t.Errorf("%T lost its label selector: %v", obj, by.Label)
			}
		}
	}
	if kinds != 6 {
		t.Errorf("%d kinds configured, want 6", kinds)
	}

	// The cache built from these options (nothing is listed before Start) answers only for
	// the watched namespaces, for full objects and for metadata alike.
	scheme := controller.NewScheme()
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{
		v1alpha2.SchemeGroupVersion.WithKind("NginxOperator"), appsv1.SchemeGroupVersion.WithKind("Deployment"),
		corev1.SchemeGroupVersion.WithKind("Service"), corev1.SchemeGroupVersion.WithKind("Pod"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithKind("Secret"),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
	} {
		// As the discovery mapper does, the list kinds too.
		mapper.Add(gvk, meta.RESTScopeNamespace)
		mapper.Add(gvk.GroupVersion().WithKind(gvk.Kind+"List"), meta.RESTScopeNamespace)
	}
	opts.Scheme, opts.Mapper = scheme, mapper
	c, err := cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, obj := range []client.Object{&v1alpha2.NginxOperator{}, &appsv1.Deployment{}, metadataOf("Secret"), metadataOf("ConfigMap"), &corev1.Pod{}} {
		err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "x"}, obj)
		if err == nil || !strings.Contains(err.Error(), "unknown namespace for the cache") {
			t.Errorf("Get %T in kube-system: %v, want the cache to refuse a namespace it does not watch", obj, err)
		}
	}
	if err := c.List(ctx, &appsv1.DeploymentList{}, client.InNamespace("kube-system")); err == nil || !strings.Contains(err.Error(), "unknown namespace for the cache") {
		t.Errorf("List Deployments in kube-system: %v, want the cache to refuse it", err)
	}
}
