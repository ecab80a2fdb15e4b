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

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// printerColumns are the columns of our table (pkg/registry/nginxoperator/table.go) with
// the same names and priorities. kube-apiserver adds NAME itself. A column of a CRD is one
// JSONPath, so where our table computes a cell the CRD shows the field it comes from:
//   - READY and REASON are the Ready condition's (ours shows Unknown while it is older
//     than the spec);
//   - PODS is status.readyReplicas (ours shows ready/desired);
//   - REPLICAS is spec.replicas, empty in QPS mode (ours shows ceil(totalQPS/singlePodQPS));
//   - PORTS lists container port numbers (ours adds the protocol);
//   - SERVICE is the Service type (ours adds port:nodePort pairs);
//   - QPS is spec.qps.totalQPS (ours adds singlePodQPS and the observed real QPS).
var printerColumns = []apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Description: "Status of the Ready condition."},
	{Name: "Reason", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].reason`, Description: "Reason of the Ready condition."},
	{Name: "Pods", Type: "integer", JSONPath: ".status.readyReplicas", Description: "Ready pods."},
	{Name: "Ports", Type: "string", JSONPath: ".spec.ports[*].containerPort", Description: "Container ports of nginx."},
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Description: "Time since creation."},
	{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas", Priority: 1, Description: "Desired pods (spec.replicas; empty in QPS mode)."},
	{Name: "Available", Type: "integer", JSONPath: ".status.availableReplicas", Priority: 1, Description: "Available pods."},
	{Name: "Image", Type: "string", JSONPath: ".spec.image", Priority: 1, Description: "nginx container image."},
	{Name: "Service", Type: "string", JSONPath: ".spec.service.type", Priority: 1, Description: "Service type."},
	{Name: "QPS", Type: "integer", JSONPath: ".spec.qps.totalQPS", Priority: 1, Description: "totalQPS in QPS mode."},
}
