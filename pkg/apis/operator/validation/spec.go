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

package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

var (
	supportedProtocols    = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)
	supportedServiceTypes = sets.New(operator.ServiceTypeClusterIP, operator.ServiceTypeNodePort, operator.ServiceTypeLoadBalancer)
	// Kubernetes accepts the deprecated Global and Local spellings only on read.
	supportedTrafficPolicies = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
)

// The default Kubernetes --service-node-port-range.
const (
	minNodePort = 30000
	maxNodePort = 32767
)

// MaxPorts bounds spec.ports and spec.service.ports. Kubernetes sets no such limit, but
// every container port becomes a Service port (and an EndpointSlice port), and an
// absurd list would be stored, listed and reconciled in full: refuse it up front.
const MaxPorts = 100

// ValidateNginxOperatorSpec validates the desired state.
func ValidateNginxOperatorSpec(spec *operator.NginxOperatorSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if strings.TrimSpace(spec.Image) == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("image"), "must name a container image"))
	} else if strings.TrimSpace(spec.Image) != spec.Image {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("image"), spec.Image, "must not have leading or trailing whitespace"))
	}
	if spec.Replicas != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.Replicas), fldPath.Child("replicas"))...)
		if spec.QPS != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("replicas"), "must not be set when spec.qps is set: qps decides the number of replicas"))
		}
	}
	if spec.QPS != nil {
		allErrs = append(allErrs, validateQPS(spec.QPS, fldPath.Child("qps"))...)
	}
	allErrs = append(allErrs, validatePorts(spec.Ports, fldPath.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(spec.Env, fldPath.Child("env"))...)
	allErrs = append(allErrs, validateResources(&spec.Resources, fldPath.Child("resources"))...)
	if spec.Service != nil {
		allErrs = append(allErrs, validateService(spec.Service, spec.Ports, fldPath.Child("service"))...)
	}
	if spec.Config != nil {
		allErrs = append(allErrs, validateConfig(spec.Config, fldPath.Child("config"))...)
	}
	allErrs = append(allErrs, validateFiles(spec.Files, fldPath.Child("files"))...)
	allErrs = append(allErrs, validateTLS(spec.TLS, fldPath.Child("tls"))...)
	allErrs = append(allErrs, validateScratch(spec.Scratch, spec.Files, fldPath.Child("scratch"))...)
	allErrs = append(allErrs, validateMetrics(spec, fldPath)...)
	allErrs = append(allErrs, validateContentUpdate(spec, fldPath)...)
	if spec.HealthcheckPath != "" {
		allErrs = append(allErrs, validateHealthcheckPath(spec.HealthcheckPath, spec.Ports, fldPath.Child("healthcheckPath"))...)
	}
	if spec.SecurityContext != nil {
		allErrs = append(allErrs, validateSecurityContext(spec.SecurityContext, fldPath.Child("securityContext"))...)
	}
	if spec.Pod != nil {
		allErrs = append(allErrs, validatePodOptions(spec.Pod, fldPath.Child("pod"))...)
	}
	if spec.PodDisruptionBudget != nil {
		allErrs = append(allErrs, validatePodDisruptionBudget(spec.PodDisruptionBudget, fldPath.Child("podDisruptionBudget"))...)
	}
	if spec.Canary != nil {
		allErrs = append(allErrs, validateCanary(spec.Canary, fldPath.Child("canary"))...)
	}
	if limit := spec.RevisionHistoryLimit; limit != nil && (*limit < 0 || *limit > operator.MaxRevisionHistoryLimit) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("revisionHistoryLimit"), *limit,
			fmt.Sprintf("must be between 0 and %d: the number of revisions before the newest that are kept", operator.MaxRevisionHistoryLimit)))
	}
	return allErrs
}

func validateQPS(qps *operator.QPSSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if qps.SinglePodQPS <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("singlePodQPS"), qps.SinglePodQPS, "must be greater than 0"))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(qps.TotalQPS), fldPath.Child("totalQPS"))...)
	return allErrs
}

func validatePorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	if len(ports) == 0 {
		return field.ErrorList{field.Required(fldPath, "at least one port is required")}
	}
	if len(ports) > MaxPorts {
		// One error for the list, not one per item of an absurd list.
		return field.ErrorList{field.TooMany(fldPath, len(ports), MaxPorts)}
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	numbers := sets.New[string]()
	hostPorts := sets.New[string]()
	for i, port := range ports {
		idxPath := fldPath.Index(i)
		// Names are required: the Service and the probes target ports by name.
		if port.Name == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), "every port needs a name; the Service targets ports by name"))
		} else {
			for _, msg := range validation.IsValidPortName(port.Name) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("name"), port.Name, msg))
			}
			if names.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("containerPort"), port.ContainerPort, msg))
		}
		key := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
		if numbers.Has(key) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("containerPort"), port.ContainerPort))
		}
		numbers.Insert(key)
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostPort"), port.HostPort, msg))
			}
			// kube-apiserver refuses a pod that binds one host port twice.
			hostKey := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if hostPorts.Has(hostKey) {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("hostPort"), port.HostPort))
			}
			hostPorts.Insert(hostKey)
		}
		if port.HostIP != "" {
			allErrs = append(allErrs, validation.IsValidIP(idxPath.Child("hostIP"), port.HostIP)...)
		}
		if !supportedProtocols.Has(port.Protocol) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), port.Protocol, sets.List(supportedProtocols)))
		}
	}
	return allErrs
}

func validateService(svc *operator.ServiceSpec, containerPorts []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !supportedServiceTypes.Has(svc.Type) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), svc.Type, sets.List(supportedServiceTypes)))
	}
	allErrs = append(allErrs, validateUserLabels(svc.Labels, fldPath.Child("labels"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(svc.Annotations, fldPath.Child("annotations"))...)
	if p := svc.ExternalTrafficPolicy; p != "" {
		switch {
		case !supportedTrafficPolicies.Has(p):
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("externalTrafficPolicy"), p, sets.List(supportedTrafficPolicies)))
		case svc.Type == operator.ServiceTypeClusterIP:
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("externalTrafficPolicy"), "may only be set when spec.service.type is NodePort or LoadBalancer"))
		}
	}
	if len(svc.LoadBalancerSourceRanges) > 0 && svc.Type != operator.ServiceTypeLoadBalancer {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("loadBalancerSourceRanges"), "may only be set when spec.service.type is LoadBalancer"))
	}
	for i, cidr := range svc.LoadBalancerSourceRanges {
		allErrs = append(allErrs, validation.IsValidCIDR(fldPath.Child("loadBalancerSourceRanges").Index(i), cidr)...)
	}
	portsPath := fldPath.Child("ports")
	if len(svc.Ports) == 0 {
		allErrs = append(allErrs, field.Required(portsPath, "at least one port is required"))
	}
	if len(svc.Ports) > MaxPorts {
		return append(allErrs, field.TooMany(portsPath, len(svc.Ports), MaxPorts))
	}
	protocolByName := make(map[string]corev1.Protocol, len(containerPorts))
	for _, p := range containerPorts {
		protocolByName[p.Name] = p.Protocol
	}
	allowsNodePort := svc.Type == operator.ServiceTypeNodePort || svc.Type == operator.ServiceTypeLoadBalancer
	names := sets.New[string]()
	numbers := sets.New[string]()
	nodePorts := sets.New[int32]()
	for i, port := range svc.Ports {
		idxPath := portsPath.Index(i)
		protocol, found := protocolByName[port.Name]
		switch {
		case port.Name == "":
			allErrs = append(allErrs, field.Required(idxPath.Child("name"), "must name a container port in spec.ports"))
		case !found:
			allErrs = append(allErrs, field.NotFound(idxPath.Child("name"), port.Name))
		case names.Has(port.Name):
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), port.Name))
		}
		names.Insert(port.Name)
		for _, msg := range validation.IsValidPortNum(int(port.Port)) {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("port"), port.Port, msg))
		}
		key := fmt.Sprintf("%d/%s", port.Port, protocol)
		if numbers.Has(key) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("port"), port.Port))
		}
		numbers.Insert(key)
		if port.NodePort == nil {
			continue
		}
		nodePortPath := idxPath.Child("nodePort")
		switch {
		case !allowsNodePort:
			allErrs = append(allErrs, field.Forbidden(nodePortPath, "may only be set when spec.service.type is NodePort or LoadBalancer"))
		case *port.NodePort < minNodePort || *port.NodePort > maxNodePort:
			allErrs = append(allErrs, field.Invalid(nodePortPath, *port.NodePort, fmt.Sprintf("must be between %d and %d, inclusive", minNodePort, maxNodePort)))
		case nodePorts.Has(*port.NodePort):
			allErrs = append(allErrs, field.Duplicate(nodePortPath, *port.NodePort))
		}
		nodePorts.Insert(*port.NodePort)
	}
	return allErrs
}
