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
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// renderedBase renders artifacts/deploy for a test to change.
func renderedBase(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objects, err := renderBase(repoOptions().baseDir)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func find(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// buildFrom runs the generator's steps over objects and returns the first error.
func buildFrom(objects []*unstructured.Unstructured) error {
	b, err := splitBase(objects)
	if err != nil {
		return err
	}
	server, err := findAPIServer(b)
	if err != nil {
		return err
	}
	if _, err := b.prerequisites(server.service); err != nil {
		return err
	}
	examples, err := readExamples(repoOptions().samplesDir)
	if err != nil {
		return err
	}
	_, err = buildCSV(b, server, csvInputs{version: "v0.1.0", minKubeVersion: "1.36.0", examples: examples})
	return err
}

// Changes to the base that the bundle cannot express must stop the generator with an
// error that names the object, never produce a bundle that silently lacks it.
func TestBaseChangesWithoutARule(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, objects []*unstructured.Unstructured) []*unstructured.Unstructured
		want   string
	}{
		{"a kind without a rule", func(t *testing.T, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
			cm := &unstructured.Unstructured{}
			cm.SetAPIVersion("v1")
			cm.SetKind("Secret")
			cm.SetName("settings")
			cm.SetNamespace("nginx-operator-system")
			return append(objects, cm)
		}, "Secret settings: no rule"},
		{"a binding to a cluster role the base does not define", func(t *testing.T, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
			crb := find(objects, "ClusterRoleBinding", "nginx-operator-controller")
			if err := unstructured.SetNestedField(crb.Object, "cluster-admin", "roleRef", "name"); err != nil {
				t.Fatal(err)
			}
			return objects
		}, "ClusterRole cluster-admin is not defined in the base"},
		{"auth-delegator for another account than the apiserver's", func(t *testing.T, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
			crb := find(objects, "ClusterRoleBinding", "nginx-operator-apiserver:system:auth-delegator")
			subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
			subjects[0].(map[string]any)["name"] = "nginx-operator-controller"
			if err := unstructured.SetNestedSlice(crb.Object, subjects, "subjects"); err != nil {
				t.Fatal(err)
			}
			return objects
		}, "system:auth-delegator is not defined in the base"},
		{"a Service in front of a Deployment", func(t *testing.T, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
			svc := find(objects, "Service", "nginx-operator-apiserver").DeepCopy()
			svc.SetName("nginx-operator-controller-metrics")
			if err := unstructured.SetNestedStringMap(svc.Object, map[string]string{"app.kubernetes.io/name": "nginx-operator-controller"}, "spec", "selector"); err != nil {
				t.Fatal(err)
			}
			return append(objects, svc)
		}, "Service nginx-operator-controller-metrics: no rule"},
		{"an apiserver without a serving certificate flag", func(t *testing.T, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
			d := find(objects, "Deployment", "nginx-operator-apiserver")
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			c := containers[0].(map[string]any)
			c["args"] = slices.DeleteFunc(c["args"].([]any), func(a any) bool { return strings.HasPrefix(a.(string), "--tls-private-key-file=") })
			if err := unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
			return objects
		}, "--tls-private-key-file"},
		{"an APIService for a version the apiserver does not serve", func(t *testing.T, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
			api := find(objects, "APIService", "v1alpha1.operator.example.com")
			if err := unstructured.SetNestedField(api.Object, "v1beta1", "spec", "version"); err != nil {
				t.Fatal(err)
			}
			return objects
		}, "no APIService for operator.example.com/v1alpha1"},
	}
	if err := buildFrom(renderedBase(t)); err != nil {
		t.Fatalf("the unchanged base: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := buildFrom(tc.change(t, renderedBase(t)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The bundle's apiserver reads OLM's certificate, and nothing of the base's own.
func TestAPIServerUsesOLMServingCert(t *testing.T) {
	b, err := splitBase(renderedBase(t))
	if err != nil {
		t.Fatal(err)
	}
	server, err := findAPIServer(b)
	if err != nil {
		t.Fatal(err)
	}
	d := server.deployment.DeepCopy()
	if err := useOLMServingCert(d); err != nil {
		t.Fatal(err)
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--tls-cert-file=" + olmCertFile, "--tls-private-key-file=" + olmKeyFile} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	// The etcd client certificate stays: like etcd, the cluster admin provides it.
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "nginx-operator-apiserver-tls" {
			t.Errorf("volume %s still mounts the base's serving certificate Secret %s", v.Name, v.Secret.SecretName)
		}
	}
	if server.containerPort != 8443 {
		t.Errorf("containerPort = %d, want the apiserver's https port 8443", server.containerPort)
	}
}

// The bundle's controller serves /metrics with a self-signed certificate: nothing under OLM
// creates the base's metrics certificate Secret, which the pods would wait for.
func TestControllerUsesSelfSignedMetricsCert(t *testing.T) {
	b, err := splitBase(renderedBase(t))
	if err != nil {
		t.Fatal(err)
	}
	var controller *appsv1.Deployment
	for i := range b.deployments {
		if b.deployments[i].Name == "nginx-operator-controller" {
			controller = b.deployments[i].DeepCopy()
		}
	}
	if controller == nil {
		t.Fatal("the base has no Deployment nginx-operator-controller")
	}
	if !slices.ContainsFunc(controller.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, metricsCertFlag+"=") }) {
		t.Fatalf("the base's controller args %v lack %s", controller.Spec.Template.Spec.Containers[0].Args, metricsCertFlag)
	}
	if err := useSelfSignedMetricsCert(controller); err != nil {
		t.Fatal(err)
	}
	spec := controller.Spec.Template.Spec
	if args := spec.Containers[0].Args; slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, metricsCertFlag) }) || !slices.Contains(args, "--metrics-bind-address=:8443") {
		t.Errorf("args %v: want no %s and the metrics address kept", args, metricsCertFlag)
	}
	if len(spec.Volumes) != 0 || len(spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("volumes %v, mounts %v left; want none", spec.Volumes, spec.Containers[0].VolumeMounts)
	}
}
