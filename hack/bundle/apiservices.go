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

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/generated/openapi"
)

// ownedResources are the kinds the controller creates for every NginxOperator (the
// Owns() of pkg/controller/manager.go); OLM's console shows them as the API's resources.
var ownedResources = []operatorsv1alpha1.APIResourceReference{
	{Kind: "Deployment", Version: appsv1.SchemeGroupVersion.Version},
	{Kind: "Service", Version: corev1.SchemeGroupVersion.Version},
}

// apiServer is the Deployment that serves the aggregated API, as the base wires it.
type apiServer struct {
	deployment *appsv1.Deployment
	// The Service the base's APIServices point at; OLM makes its own instead.
	service *corev1.Service
	// The container port the Service forwards to: OLM's Service and APIService use it.
	containerPort int32
}

// ownedAPIServices describes every version the API types register (install.Install,
// preferred first) as an owned API service of the CSV; the base's APIServices must
// register exactly these. Kinds and plurals come from the scheme, descriptions from the
// OpenAPI definitions generated from the types' comments.
func ownedAPIServices(b *base, server *apiServer) ([]operatorsv1alpha1.APIServiceDescription, error) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	definitions := openapi.GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) })
	kinds, _, err := scheme.ObjectKinds(&operator.NginxOperator{})
	if err != nil {
		return nil, err
	}
	kind := kinds[0].Kind

	var owned []operatorsv1alpha1.APIServiceDescription
	for _, gv := range scheme.PrioritizedVersionsForGroup(operator.GroupName) {
		gvk := gv.WithKind(kind)
		obj, err := scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		named, ok := obj.(interface{ OpenAPIModelName() string })
		if !ok {
			return nil, fmt.Errorf("%s has no OpenAPI model name", gvk)
		}
		definition, ok := definitions[named.OpenAPIModelName()]
		if !ok || definition.Schema.Description == "" {
			return nil, fmt.Errorf("no OpenAPI description for %s", named.OpenAPIModelName())
		}
		if !slices.ContainsFunc(b.apiServices, func(s apiService) bool { return s.group == gvk.Group && s.version == gvk.Version }) {
			return nil, fmt.Errorf("the base registers no APIService for %s, which the apiserver serves", gv)
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		owned = append(owned, operatorsv1alpha1.APIServiceDescription{
			Name:           plural.Resource,
			Group:          gvk.Group,
			Version:        gvk.Version,
			Kind:           gvk.Kind,
			DisplayName:    fmt.Sprintf("%s (%s)", gvk.Kind, gvk.Version),
			Description:    definition.Schema.Description,
			DeploymentName: server.deployment.Name,
			ContainerPort:  server.containerPort,
			Resources:      ownedResources,
		})
	}
	if len(owned) != len(b.apiServices) {
		return nil, fmt.Errorf("the base registers %d APIServices, the apiserver serves %d versions", len(b.apiServices), len(owned))
	}
	return owned, nil
}

// findAPIServer follows the base's APIServices to their Service and the Deployment that
// Service selects; all APIServices must lead to the same one.
func findAPIServer(b *base) (*apiServer, error) {
	if len(b.apiServices) == 0 {
		return nil, fmt.Errorf("the base has no APIService")
	}
	first := b.apiServices[0]
	for _, s := range b.apiServices[1:] {
		if s.serviceNamespace != first.serviceNamespace || s.serviceName != first.serviceName {
			return nil, fmt.Errorf("APIServices %s and %s point at different Services; a CSV's owned APIs are served by one Deployment here", first.name, s.name)
		}
	}
	service, err := b.service(first.serviceNamespace, first.serviceName)
	if err != nil {
		return nil, err
	}
	deployment, err := b.deploymentSelectedBy(service)
	if err != nil {
		return nil, err
	}
	if len(service.Spec.Ports) != 1 {
		return nil, fmt.Errorf("Service %s has %d ports; the APIService needs exactly one", service.Name, len(service.Spec.Ports))
	}
	target := service.Spec.Ports[0].TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(service.Spec.Ports[0].Port) // the API default
	}
	port, err := resolveTargetPort(deployment, target)
	if err != nil {
		return nil, fmt.Errorf("Service %s: %w", service.Name, err)
	}
	return &apiServer{deployment: deployment, service: service, containerPort: port}, nil
}

// resolveTargetPort turns a Service's targetPort (a number or a container port's name)
// into the container port number.
func resolveTargetPort(d *appsv1.Deployment, target intstr.IntOrString) (int32, error) {
	if target.Type == intstr.Int {
		return target.IntVal, nil
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == target.StrVal {
				return p.ContainerPort, nil
			}
		}
	}
	return 0, fmt.Errorf("targetPort %q names no container port of Deployment %s", target.StrVal, d.Name)
}
