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

// Package builders turns an NginxOperator into the objects it asks for. The builders in
// this package are pure functions of the NginxOperator; the reconciler (pkg/controller)
// applies what they return with server-side apply and writes status.
package builders

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

const (
	// FieldManager owns every field the controller applies.
	FieldManager = operand.ManagedBy
	// ContainerName is the name of the nginx container.
	ContainerName = operand.ContainerName
	// ForceRedeployAnnotation on the pod template carries spec.forceRedeploy, so a new
	// value rolls the pods.
	ForceRedeployAnnotation = "operator.example.com/force-redeploy"
	// PreStopDelaySeconds is how long a terminating nginx pod keeps serving before nginx
	// is asked to stop: longer than kube-proxy takes to drop it from the Service.
	PreStopDelaySeconds = 5
	// controllerAnnotationPrefix is that of the pod annotations the controller sets.
	controllerAnnotationPrefix = v1alpha2.GroupName + "/"
	// ManagedByLabel marks every Deployment and Service the controller applies, with
	// the value FieldManager; the informer caches hold only objects that carry it.
	ManagedByLabel = operand.ManagedByLabel
)

// SelectorLabels select the pods of one NginxOperator; the instance label keeps two
// NginxOperators in a namespace from selecting each other's pods.
func SelectorLabels(no *v1alpha2.NginxOperator) map[string]string {
	return operand.SelectorLabels(no.Name)
}

func objectLabels(no *v1alpha2.NginxOperator) map[string]string {
	l := SelectorLabels(no)
	l[ManagedByLabel] = FieldManager
	return l
}

// DesiredReplicas is ceil(totalQPS/singlePodQPS) in QPS mode, else spec.replicas,
// else the default.
func DesiredReplicas(spec *v1alpha2.NginxOperatorSpec) int32 {
	if spec.QPS != nil {
		return operand.ReplicasForQPS(spec.QPS.TotalQPS, spec.QPS.SinglePodQPS)
	}
	return ptr.Deref(spec.Replicas, operand.DefaultReplicas)
}

func ownerReference(no *v1alpha2.NginxOperator) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(v1alpha2.SchemeGroupVersion.String()).
		WithKind("NginxOperator").
		WithName(no.Name).
		WithUID(no.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// Deployment returns the Deployment the NginxOperator asks for; contentHash is the hash of
// what it mounts from ConfigMaps and Secrets ("" when it mounts none). Only fields set
// here are owned by the controller; everything else is left to Kubernetes defaults and
// other managers. The exporter, when spec.metrics is on, runs DefaultExporterImage.
func Deployment(no *v1alpha2.NginxOperator, contentHash string) (*appsv1ac.DeploymentApplyConfiguration, error) {
	return DeploymentWithExporter(no, contentHash, DefaultExporterImage)
}

// DeploymentWithExporter is Deployment with the exporter image the controller was given.
func DeploymentWithExporter(no *v1alpha2.NginxOperator, contentHash, exporterImage string) (*appsv1ac.DeploymentApplyConfiguration, error) {
	spec := &no.Spec
	// The termination message policy is left to its default, File: nginx's log lines never
	// reach the pod's status, which more readers see than may read its logs.
	container := corev1ac.Container().WithName(ContainerName).WithImage(spec.Image).
		// A terminating pod keeps serving while kube-proxy and load balancers stop sending
		// to it, so a rollout drops no request. The kubelet sleeps: images need no shell.
		WithLifecycle(corev1ac.Lifecycle().WithPreStop(corev1ac.LifecycleHandler().WithSleep(corev1ac.SleepAction().WithSeconds(PreStopDelaySeconds))))
	for _, p := range spec.Ports {
		port := corev1ac.ContainerPort().WithName(p.Name).WithContainerPort(p.ContainerPort).WithProtocol(ProtocolOrTCP(p.Protocol))
		if p.HostPort != 0 {
			port.WithHostPort(p.HostPort)
		}
		if p.HostIP != "" {
			port.WithHostIP(p.HostIP)
		}
		container.WithPorts(port)
	}
	for i := range spec.Env {
		env, err := convert[corev1ac.EnvVarApplyConfiguration](&spec.Env[i])
		if err != nil {
			return nil, err
		}
		container.WithEnv(env)
	}
	// spec.scratch's volumes count in the container's resources (scratch.go).
	if res := withScratchResources(spec.Resources, spec.Scratch); len(res.Limits) > 0 || len(res.Requests) > 0 {
		resources, err := convert[corev1ac.ResourceRequirementsApplyConfiguration](&res)
		if err != nil {
			return nil, err
		}
		container.WithResources(resources)
	}
	if probePort, ok := firstTCPPort(spec.Ports); ok {
		container.
			WithReadinessProbe(probe(probePort, spec.HealthcheckPath).WithPeriodSeconds(5)).
			WithLivenessProbe(probe(probePort, spec.HealthcheckPath).WithInitialDelaySeconds(10).WithPeriodSeconds(10))
	}
	var podSecurity *corev1.PodSecurityContext
	if spec.Pod != nil {
		podSecurity = spec.Pod.SecurityContext
	}
	containerSecurity, podSecurity := restrictedSecurity(spec.SecurityContext, podSecurity)
	sc, err := convert[corev1ac.SecurityContextApplyConfiguration](containerSecurity)
	if err != nil {
		return nil, err
	}
	container.WithSecurityContext(sc)
	volumes, volumeMounts := mounts(no)
	container.WithVolumeMounts(volumeMounts...)
	containers := []*corev1ac.ContainerApplyConfiguration{container}
	// nginx needs no API access: the pods carry a ServiceAccount token only when the spec
	// names a ServiceAccount, which its writer was authorized to act as (docs/security.md).
	automountToken := spec.Pod != nil && spec.Pod.ServiceAccountName != ""
	podSpec := corev1ac.PodSpec().WithAutomountServiceAccountToken(automountToken)
	if !apiequality.Semantic.DeepEqual(podSecurity, &corev1.PodSecurityContext{}) {
		psc, err := convert[corev1ac.PodSecurityContextApplyConfiguration](podSecurity)
		if err != nil {
			return nil, err
		}
		podSpec.WithSecurityContext(psc)
	}
	metrics := MetricsEnabled(spec)
	if metrics {
		containers, volumes = withMetrics(no, exporterImage, podSpec, container, volumes)
	}
	podSpec.WithContainers(containers...).WithVolumes(volumes...)
	template := corev1ac.PodTemplateSpec().WithSpec(podSpec)
	annotations := map[string]string{}
	reload := Reloads(spec)
	if pod := spec.Pod; pod != nil {
		if err := setPodOptions(podSpec, pod, SelectorLabels(no)); err != nil {
			return nil, err
		}
		template.WithLabels(pod.Labels)
		// The controller's prefix is its own (validation refuses it): a user's value could
		// steer the sidecar or the reload handshake, so none is copied, stored before or not.
		for k, v := range pod.Annotations {
			if !strings.HasPrefix(k, controllerAnnotationPrefix) {
				annotations[k] = v
			}
		}
	}
	// The controller's own labels and annotations are set last, so they win over the
	// user's (validation refuses the clashing labels).
	template.WithLabels(objectLabels(no))
	if metrics {
		annotations[StatusConfigAnnotation] = StatusConfig
	}
	if reload && spec.Config != nil {
		annotations[MainConfigAnnotation] = MainConfig
	}
	if spec.ForceRedeploy != "" {
		annotations[ForceRedeployAnnotation] = spec.ForceRedeploy
	}
	// In Reload mode new content reaches the running pods (reload.go); only a rollout
	// needs the hash in the template.
	if contentHash != "" && !reload {
		annotations[ContentHashAnnotation] = contentHash
	}
	if len(annotations) > 0 {
		template.WithAnnotations(annotations)
	}
	return appsv1ac.Deployment(no.Name, no.Namespace).
		WithLabels(objectLabels(no)).
		WithOwnerReferences(ownerReference(no)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(DesiredReplicas(spec)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(no))).
			WithTemplate(template)), nil
}

// probe is an HTTP GET of path when the spec names one, else a TCP connect.
func probe(port intstr.IntOrString, path string) *corev1ac.ProbeApplyConfiguration {
	if path != "" {
		return corev1ac.Probe().WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(port))
	}
	return corev1ac.Probe().WithTCPSocket(corev1ac.TCPSocketAction().WithPort(port))
}

// firstTCPPort is the port the probes check: a TCP connect needs a TCP port.
func firstTCPPort(ports []corev1.ContainerPort) (intstr.IntOrString, bool) {
	for _, p := range ports {
		if ProtocolOrTCP(p.Protocol) == corev1.ProtocolTCP {
			if p.Name != "" {
				return intstr.FromString(p.Name), true
			}
			return intstr.FromInt32(p.ContainerPort), true
		}
	}
	return intstr.IntOrString{}, false
}

// ProtocolOrTCP is a port's protocol as the API server defaults it.
func ProtocolOrTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// convert turns an API struct into its apply configuration; both share one JSON form.
func convert[T any](in any) (*T, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	out := new(T)
	return out, json.Unmarshal(data, out)
}
