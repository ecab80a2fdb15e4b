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

// probes are the objects whose Go defaulting decides the CRD's defaults (defaults.go). A
// field gets a default only when every probe that leaves it out ends up with the same
// value, so each probe below changes one input our defaulting reads; a default that
// depends on another field then shows two values and is left out of the CRD.
var probes = []string{
	// Nothing set: what a minimal object becomes.
	`{"metadata": {"name": "empty"}}`,
	// An image of the user's: the well-known port and no security context, where the
	// default image gets 8080 and a restricted one.
	`{"metadata": {"name": "image"}, "spec": {"image": "nginx:custom"}}`,
	// TLS adds an https port to the default ports.
	`{"metadata": {"name": "tls"}, "spec": {"tls": [{"secretName": "site-tls"}]}}`,
	// ... also where pod options or a Service port without a number are given.
	`{"metadata": {"name": "image-pod"}, "spec": {"image": "nginx:custom", "pod": {"nodeSelector": {"disk": "ssd"}},
	  "service": {"ports": [{"name": "http"}]}}}`,
	// Security contexts of the user's, whole or partial, with the default image: they are
	// kept as given.
	`{"metadata": {"name": "security"}, "spec": {"securityContext": {"readOnlyRootFilesystem": true},
	  "pod": {"nodeSelector": {"disk": "ssd"}, "securityContext": {"runAsUser": 101}}}}`,
	`{"metadata": {"name": "partial-security"}, "spec": {"securityContext": {"capabilities": {}},
	  "pod": {"securityContext": {"seccompProfile": {}}}}}`,
	// QPS mode: replicas is left to the QPS rule.
	`{"metadata": {"name": "qps"}, "spec": {"qps": {"singlePodQPS": 100, "totalQPS": 250}}}`,
	// Own ports without a protocol: the Service is derived from the container ports.
	`{"metadata": {"name": "ports"}, "spec": {"image": "nginx:custom", "replicas": 3,
	  "ports": [{"name": "web", "containerPort": 8080}, {"name": "dns", "containerPort": 53, "protocol": "UDP"}]}}`,
	// Service ports without numbers, against the default container port ...
	`{"metadata": {"name": "service-default-port"}, "spec": {"service": {"ports": [{"name": "http"}]}}}`,
	// ... and against a port of the user's.
	`{"metadata": {"name": "service-own-port"}, "spec": {"ports": [{"name": "web", "containerPort": 8080}],
	  "service": {"type": "NodePort", "ports": [{"name": "web", "nodePort": 30080}]}}}`,
	// nginx's own port on the exporter's number: metrics default to off.
	`{"metadata": {"name": "own-metrics-port"}, "spec": {"ports": [{"name": "stats", "containerPort": 9113}]}}`,
	// An env var read from a file, without saying whether the file is optional.
	`{"metadata": {"name": "env"}, "spec": {"env": [{"name": "A", "value": "a"},
	  {"name": "B", "valueFrom": {"fileKeyRef": {"volumeName": "config", "path": "env", "key": "B"}}}]}}`,
	// A status, which no defaulting touches.
	`{"metadata": {"name": "status"}, "status": {"replicas": 2, "selector": "app=x", "conditions": [{"type": "Available", "status": "True",
	  "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Ready", "message": ""}]}}`,
}
