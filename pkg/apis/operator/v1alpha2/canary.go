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

package v1alpha2

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// The defaults of spec.canary, chosen on a real node (docs/api.md, Staged reload): a
// quarter of the pods answers enough requests within half a minute to tell a broken
// configuration from a good one, and a configuration answering 5xx to everything fails
// within seconds of the canary loading it.
const (
	DefaultCanaryPods              = "25%"
	DefaultCanaryAnalysisSeconds   = 30
	DefaultCanaryMaxErrorPercent   = 5
	DefaultCanaryMaxLatencyPercent = 100
	DefaultCanaryMinRequests       = 20
)

// CanaryDecisionAnnotation on an NginxOperator decides a staged reload before its
// analysis does: "promote <hash>" or "abort <hash>", hash being status.canary.hash
// (kubectl nginx promote and abort write it). A decision for another hash is stale and
// ignored.
const CanaryDecisionAnnotation = "operator.example.com/canary"

// CanarySettings is spec.canary with the defaults of what it leaves unset: what the
// controller reads, not a type of the API.
// +k8s:openapi-gen=false
// +k8s:deepcopy-gen=false
type CanarySettings struct {
	Enabled           bool               `protobuf:"varint,1,opt,name=enabled"`
	Pods              intstr.IntOrString `protobuf:"bytes,2,opt,name=pods"`
	Analysis          time.Duration      `protobuf:"varint,3,opt,name=analysis,casttype=time.Duration"`
	MaxErrorPercent   int32              `protobuf:"varint,4,opt,name=maxErrorPercent"`
	MaxLatencyPercent int32              `protobuf:"varint,5,opt,name=maxLatencyPercent"`
	MinRequests       int32              `protobuf:"varint,6,opt,name=minRequests"`
}

// CanarySettings returns spec.canary's settings, defaults filled in.
func (s *NginxOperatorSpec) CanarySettings() CanarySettings {
	c := CanarySettings{Enabled: true, Pods: intstr.FromString(DefaultCanaryPods),
		Analysis: DefaultCanaryAnalysisSeconds * time.Second, MaxErrorPercent: DefaultCanaryMaxErrorPercent,
		MaxLatencyPercent: DefaultCanaryMaxLatencyPercent, MinRequests: DefaultCanaryMinRequests}
	spec := s.Canary
	if spec == nil {
		return c
	}
	if spec.Enabled != nil {
		c.Enabled = *spec.Enabled
	}
	if spec.Pods != nil {
		c.Pods = *spec.Pods
	}
	if spec.AnalysisSeconds != nil {
		c.Analysis = time.Duration(*spec.AnalysisSeconds) * time.Second
	}
	if spec.MaxErrorPercent != nil {
		c.MaxErrorPercent = *spec.MaxErrorPercent
	}
	if spec.MaxLatencyPercent != nil {
		c.MaxLatencyPercent = *spec.MaxLatencyPercent
	}
	if spec.MinRequests != nil {
		c.MinRequests = *spec.MinRequests
	}
	return c
}

// CanaryPods is how many of replicas pods load a new configuration first: at least one,
// fewer than all; 0 when there are fewer than two pods, which stage nothing.
func (c CanarySettings) CanaryPods(replicas int) int {
	if replicas < 2 {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&c.Pods, replicas, true)
	if err != nil || n < 1 {
		n = 1
	}
	return min(n, replicas-1)
}
