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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/builders/buildertest"
)

// The shared fixtures (buildertest), under the names the tests use.
var (
	sample    = buildertest.Sample
	reloading = buildertest.Reloading
)

// plainReloading is reloading with spec.canary off: every pod loads new content at once.
func plainReloading(name, config string) *v1alpha2.NginxOperator {
	no := reloading(name, config)
	no.Spec.Canary = &v1alpha2.CanarySpec{Enabled: ptr.To(false)}
	return no
}

// objectLabels are the labels the controller puts on what it writes: its pods carry them.
func objectLabels(no *v1alpha2.NginxOperator) map[string]string {
	l := builders.SelectorLabels(no)
	l[builders.ManagedByLabel] = builders.FieldManager
	return l
}

// kindOf names an object's kind in the write log.
func kindOf(obj runtime.Object) string {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *corev1.Service:
		return "Service"
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	case *policyv1.PodDisruptionBudget:
		return "PodDisruptionBudget"
	case *corev1.Pod:
		return "Pod"
	case *metav1.PartialObjectMetadata:
		return o.Kind
	}
	return fmt.Sprintf("%T", obj)
}
