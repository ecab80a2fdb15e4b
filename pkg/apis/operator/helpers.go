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

// DesiredReplicas is the pod count the spec asks for: spec.replicas, or in QPS mode
// ceil(totalQPS / singlePodQPS). Unset replicas outside QPS mode count as 1, the default.
func (s *NginxOperatorSpec) DesiredReplicas() int32 {
	if s.QPS != nil {
		return DesiredReplicasOf(s.Replicas, true, s.QPS.TotalQPS, s.QPS.SinglePodQPS)
	}
	return DesiredReplicasOf(s.Replicas, false, 0, 0)
}

// DesiredReplicasOf is the replica rule shared by every version's spec: in QPS mode
// ceil(total / single), else replicas, else 1.
func DesiredReplicasOf(replicas *int32, qpsMode bool, total, single int32) int32 {
	switch {
	case qpsMode:
		return QPSReplicas(total, single)
	case replicas != nil:
		return *replicas
	}
	return 1
}

// QPSReplicas returns ceil(total / single); 0 when there is no load or no valid capacity.
func QPSReplicas(total, single int32) int32 {
	if total <= 0 || single <= 0 {
		return 0
	}
	return int32((int64(total) + int64(single) - 1) / int64(single))
}
