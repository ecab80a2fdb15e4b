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

// Package operand states the facts about the nginx Deployment that both sides of the
// API rely on: the apiserver (validation, /scale, table columns) and the controller
// that builds the Deployment. It depends on no API types, so either side can import it
// without seeing the other's.
package operand

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// ContainerName is the name of the nginx container in the pod template. Downward-API
// references in spec.env may name no other container.
const ContainerName = "nginx"

// DefaultReplicas is the pod count of a spec that sets neither replicas nor qps.
const DefaultReplicas int32 = 1

// ReplicasForQPS returns the pods needed to serve total QPS at single QPS per pod,
// ceil(total / single); 0 when there is no load or no valid per-pod capacity.
func ReplicasForQPS(total, single int32) int32 {
	if total <= 0 || single <= 0 {
		return 0
	}
	return int32((int64(total) + int64(single) - 1) / int64(single))
}

// Where the controller mounts what the spec asks for, in the nginx container.
const (
	// ConfigPath is nginx's main configuration file; spec.config replaces it.
	ConfigPath = "/etc/nginx/nginx.conf"
	// TLSDirectory holds one directory per spec.tls Secret, named after the Secret.
	TLSDirectory = "/etc/nginx/tls"
)

// Metrics of an NginxOperator whose spec.metrics is on: nginx serves its stub_status page
// on the pod's loopback from a server the controller mounts as StatusConfigPath, and the
// exporter sidecar, ExporterContainerName, reads it on every scrape of its port MetricsPortName.
const (
	// ExporterContainerName is the exporter sidecar.
	ExporterContainerName = "nginx-exporter"
	// MetricsPortName and MetricsPort are the exporter's /metrics, the port PodMonitors name.
	MetricsPortName = "metrics"
	MetricsPort     = 9113
	// StatusPort is where nginx serves stub_status, on 127.0.0.1 only; StatusPath is its path.
	StatusPort = 8079
	StatusPath = "/stub_status"
	// StatusConfigDirectory holds the status server's configuration (StatusConfigPath):
	// include StatusConfigDirectory/*.conf in the http block of your nginx.conf.
	StatusConfigDirectory = "/etc/nginx/nginx-operator"
	StatusConfigPath      = StatusConfigDirectory + "/status.conf"
	// DefaultIncludeDirectory is where the stock nginx.conf of the official images includes
	// *.conf from in its http block: without spec.config the status server is mounted there
	// too, as DefaultIncludeStatusPath.
	DefaultIncludeDirectory  = "/etc/nginx/conf.d"
	DefaultIncludeStatusPath = DefaultIncludeDirectory + "/nginx-operator-status.conf"
)

// TakesMetricsPort reports whether nginx's ports use the exporter's port name or number,
// which the exporter then cannot have.
func TakesMetricsPort(ports []corev1.ContainerPort) bool {
	for _, p := range ports {
		if p.Name == MetricsPortName || p.ContainerPort == MetricsPort {
			return true
		}
	}
	return false
}

// Labels of the pods, the Deployment and the Service of an NginxOperator.
const (
	// NameLabel and InstanceLabel select the pods of one NginxOperator: every
	// NginxOperator's pods have NameLabel "nginx", InstanceLabel its own name.
	NameLabel     = "app.kubernetes.io/name"
	InstanceLabel = "app.kubernetes.io/instance"
	// ManagedByLabel, with the value ManagedBy, marks what the controller applies; its
	// caches hold only objects that carry it.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "nginx-operator"
)

// SelectorLabels select the pods of the NginxOperator called name.
func SelectorLabels(name string) map[string]string {
	return map[string]string{NameLabel: "nginx", InstanceLabel: name}
}

// Selector is SelectorLabels in the string form of status.selector and /scale: it follows
// from the name alone, so it is known before the controller has written any status.
func Selector(name string) string {
	return labels.SelectorFromSet(SelectorLabels(name)).String()
}
