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
// Package fuzzer fills NginxOperators with random values that look like what
// defaulting leaves behind, so round-trip tests compare like with like.
package fuzzer

import (
	corev1 "k8s.io/api/core/v1"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// Funcs returns the fuzzer functions for the operator API group.
var Funcs = func(codecs runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(s *operator.NginxOperatorSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Image == "" {
				s.Image = "nginx:" + c.String(8)
			}
			// replicas and qps are mutually exclusive (validation and v1alpha1 rely on it).
			if s.QPS != nil {
				s.Replicas = nil
			} else if s.Replicas == nil {
				r := c.Int31()
				s.Replicas = &r
			}
			if len(s.Ports) == 0 {
				s.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}
			}
			for i := range s.Ports {
				if s.Ports[i].Protocol == "" {
					s.Ports[i].Protocol = corev1.ProtocolTCP
				}
			}
			if s.Service == nil {
				s.Service = &operator.ServiceSpec{}
			}
			if s.Metrics == nil {
				s.Metrics = &operator.MetricsSpec{}
			}
			if s.Metrics.Enabled == nil {
				enabled := c.Bool()
				s.Metrics.Enabled = &enabled
			}
			s.ContentUpdate = []operator.ContentUpdatePolicy{"", operator.ContentUpdateReload, operator.ContentUpdateRollout}[c.Intn(3)]
		},
		// Mirrors the +default=false marker on FileKeySelector.optional.
		func(s *corev1.FileKeySelector, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Optional == nil {
				s.Optional = new(bool)
			}
		},
		func(s *operator.ServiceSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.Type == "" {
				s.Type = operator.ServiceTypeClusterIP
			}
			if len(s.Ports) == 0 {
				s.Ports = []operator.ServicePort{{Name: "http"}}
			}
			for i := range s.Ports {
				if s.Ports[i].Port == 0 {
					s.Ports[i].Port = 1 + c.Int31n(65535)
				}
			}
		},
	}
}
