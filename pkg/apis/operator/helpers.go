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

package operator

import (
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// DesiredReplicas is the pod count the spec asks for: in QPS mode
// ceil(totalQPS / singlePodQPS), else spec.replicas, else the default.
func (s *NginxOperatorSpec) DesiredReplicas() int32 {
	if s.QPS != nil {
		return operand.ReplicasForQPS(s.QPS.TotalQPS, s.QPS.SinglePodQPS)
	}
	return ptr.Deref(s.Replicas, operand.DefaultReplicas)
}
