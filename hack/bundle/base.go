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
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// apiService is the part of an apiregistration.k8s.io/v1 APIService the bundle needs
// (read from the unstructured object: k8s.io/kube-aggregator is not a dependency).
type apiService struct {
	name, group, version string
	// The Service the kube-aggregator proxies this group-version to.
	serviceNamespace, serviceName string
}

// base is the rendered kustomize base, sorted by what OLM does with each object.
type base struct {
	// The namespace of every namespaced object; OLM installs into the namespace of the
	// OperatorGroup, so the bundle can only work there (the apiserver's etcd address names it).
	namespace string
	// The labels of the base's Namespace object (Pod Security), which OLM does not create.
	namespaceLabels map[string]string

	apiServices         []apiService
	services            []corev1.Service
	deployments         []appsv1.Deployment
	statefulSets        []appsv1.StatefulSet
	cronJobs            []string // names; etcd's maintenance, applied with etcd
	clusterRoles        map[string]rbacv1.ClusterRole
	roles               map[string]rbacv1.Role // by namespace/name
	clusterRoleBindings []rbacv1.ClusterRoleBinding
	roleBindings        []rbacv1.RoleBinding

	// Objects OLM installs as they are from bundle/manifests.
	extraManifests []*unstructured.Unstructured
}

// unboundClusterRoles returns the base's ClusterRoles that no binding of the base refers
// to, in the order of objects: roles for users, such as those aggregated into the built-in
// view, edit and admin ClusterRoles by their labels. A CSV's permissions cannot carry them
// (they are rules granted to the operator's ServiceAccounts), so they go into
// bundle/manifests as they are, a kind OLM v0's catalog operator creates from a bundle.
func (b *base) unboundClusterRoles(objects []*unstructured.Unstructured) []*unstructured.Unstructured {
	bound := map[string]bool{}
	for _, binding := range b.clusterRoleBindings {
		if binding.RoleRef.Kind == "ClusterRole" {
			bound[binding.RoleRef.Name] = true
		}
	}
	for _, binding := range b.roleBindings {
		if binding.RoleRef.Kind == "ClusterRole" {
			bound[binding.RoleRef.Name] = true
		}
	}
	var out []*unstructured.Unstructured
	for _, u := range objects {
		if u.GetKind() == "ClusterRole" && !bound[u.GetName()] {
			out = append(out, u)
		}
	}
	return out
}

// olmExtraKinds are the kinds, besides the ClusterServiceVersion and CRDs, that OLM v0
// creates from a bundle's manifests directory and that the base may contain (OLM's
// catalog operator also takes RBAC objects, Secrets, ConfigMaps and Services there, but
// the bundle expresses the operator's RBAC as CSV permissions and leaves Services to OLM;
// only ClusterRoles that nothing binds go there, see unboundClusterRoles).
var olmExtraKinds = map[string]bool{
	"PodDisruptionBudget": true,
	"NetworkPolicy":       true,
	"PriorityClass":       true,
	"ConfigMap":           true,
}

// splitBase decodes the rendered objects. A kind that the bundle has no rule for is an
// error, so that adding one to artifacts/deploy forces a decision about OLM.
func splitBase(objects []*unstructured.Unstructured) (*base, error) {
	b := &base{clusterRoles: map[string]rbacv1.ClusterRole{}, roles: map[string]rbacv1.Role{}}
	var namespaceName string
	for _, u := range objects {
		// The auth-reader RoleBinding lives in kube-system; permissions() accounts for it.
		if ns := u.GetNamespace(); ns != "" && !(u.GetKind() == "RoleBinding" && ns == authReaderNamespace) {
			if b.namespace == "" {
				b.namespace = ns
			} else if b.namespace != ns {
				return nil, fmt.Errorf("%s %s/%s: the base must keep its namespaced objects in one namespace (%s), since OLM installs them into one", u.GetKind(), ns, u.GetName(), b.namespace)
			}
		}
		var err error
		switch kind := u.GetKind(); kind {
		case "Namespace":
			// Created by the cluster admin before the install (OLM installs into an
			// existing namespace); see the README. The CSV suggests it with these labels.
			namespaceName = u.GetName()
			b.namespaceLabels = u.GetLabels()
		case "APIService":
			var s apiService
			s, err = decodeAPIService(u)
			b.apiServices = append(b.apiServices, s)
		case "Service":
			err = appendDecoded(u, &b.services)
		case "Deployment":
			err = appendDecoded(u, &b.deployments)
		case "StatefulSet":
			err = appendDecoded(u, &b.statefulSets)
		case "CronJob":
			// OLM creates no CronJobs; etcd's defragmentation is applied with etcd.
			b.cronJobs = append(b.cronJobs, u.GetName())
		case "ServiceAccount":
			// OLM creates the ServiceAccount each permissions entry names.
		case "ClusterRole":
			var r rbacv1.ClusterRole
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r)
			b.clusterRoles[r.Name] = r
		case "Role":
			var r rbacv1.Role
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r)
			b.roles[r.Namespace+"/"+r.Name] = r
		case "ClusterRoleBinding":
			err = appendDecoded(u, &b.clusterRoleBindings)
		case "RoleBinding":
			err = appendDecoded(u, &b.roleBindings)
		default:
			if !olmExtraKinds[kind] {
				return nil, fmt.Errorf("%s %s: no rule for this kind in the OLM bundle (hack/bundle/base.go)", kind, u.GetName())
			}
			b.extraManifests = append(b.extraManifests, u)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	if namespaceName != b.namespace {
		return nil, fmt.Errorf("the base's Namespace is %q, its objects are in %q", namespaceName, b.namespace)
	}
	b.extraManifests = append(b.extraManifests, b.unboundClusterRoles(objects)...)
	return b, nil
}

func appendDecoded[T any](u *unstructured.Unstructured, into *[]T) error {
	var obj T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj); err != nil {
		return err
	}
	*into = append(*into, obj)
	return nil
}

func decodeAPIService(u *unstructured.Unstructured) (apiService, error) {
	s := apiService{name: u.GetName()}
	fields := []struct {
		into *string
		path []string
	}{
		{&s.group, []string{"spec", "group"}},
		{&s.version, []string{"spec", "version"}},
		{&s.serviceNamespace, []string{"spec", "service", "namespace"}},
		{&s.serviceName, []string{"spec", "service", "name"}},
	}
	for _, f := range fields {
		value, found, err := unstructured.NestedString(u.Object, f.path...)
		if err != nil || !found || value == "" {
			return s, fmt.Errorf("APIService %s has no %v", s.name, f.path)
		}
		*f.into = value
	}
	return s, nil
}

// service returns the base's Service namespace/name.
func (b *base) service(namespace, name string) (*corev1.Service, error) {
	for i := range b.services {
		if s := &b.services[i]; s.Namespace == namespace && s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("the base has no Service %s/%s", namespace, name)
}

// prerequisites checks that every Service is accounted for and returns what the cluster
// admin applies before the bundle: the Namespace, the StatefulSets (OLM installs only
// Deployments) and the Services in front of them.
func (b *base) prerequisites(apiServerService *corev1.Service) ([]string, error) {
	left := []string{"Namespace " + b.namespace}
	for _, s := range b.statefulSets {
		left = append(left, "StatefulSet "+s.Name)
	}
	for _, name := range b.cronJobs {
		left = append(left, "CronJob "+name)
	}
	for i := range b.services {
		s := &b.services[i]
		if s == apiServerService {
			continue // OLM creates its own.
		}
		selector := labels.SelectorFromSet(s.Spec.Selector)
		if len(s.Spec.Selector) == 0 || !slices.ContainsFunc(b.statefulSets, func(set appsv1.StatefulSet) bool {
			return selector.Matches(labels.Set(set.Spec.Template.Labels))
		}) {
			return nil, fmt.Errorf("Service %s: no rule for it in the OLM bundle (hack/bundle/base.go): it is neither the APIServices' nor a StatefulSet's", s.Name)
		}
		left = append(left, "Service "+s.Name)
	}
	return left, nil
}

// deploymentSelectedBy returns the one Deployment whose pods the Service selects.
func (b *base) deploymentSelectedBy(s *corev1.Service) (*appsv1.Deployment, error) {
	var found *appsv1.Deployment
	selector := labels.SelectorFromSet(s.Spec.Selector)
	for i := range b.deployments {
		d := &b.deployments[i]
		if d.Namespace != s.Namespace || len(s.Spec.Selector) == 0 || !selector.Matches(labels.Set(d.Spec.Template.Labels)) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("Service %s selects the pods of both Deployment %s and %s", s.Name, found.Name, d.Name)
		}
		found = d
	}
	if found == nil {
		return nil, fmt.Errorf("Service %s selects no Deployment's pods", s.Name)
	}
	return found, nil
}
