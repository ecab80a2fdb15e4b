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

package builders

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// nginxContainer is the nginx container of the spec: image, ports, env, resources (with
// spec.scratch's, scratch.go), probes, the security context restrictedSecurity merged, and
// the mounts of its content and scratch volumes.
func nginxContainer(spec *v1alpha2.NginxOperatorSpec, security *corev1.SecurityContext, volumeMounts []*corev1ac.VolumeMountApplyConfiguration) (*corev1ac.ContainerApplyConfiguration, error) {
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
	sc, err := convert[corev1ac.SecurityContextApplyConfiguration](security)
	if err != nil {
		return nil, err
	}
	container.WithSecurityContext(sc)
	return container.WithVolumeMounts(volumeMounts...), nil
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
