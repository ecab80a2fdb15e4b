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
	"testing"

	"k8s.io/utils/ptr"
)

func TestDesiredReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec NginxOperatorSpec
		want int32
	}{
		{"replicas", NginxOperatorSpec{Replicas: ptr.To[int32](4)}, 4},
		{"zero replicas", NginxOperatorSpec{Replicas: ptr.To[int32](0)}, 0},
		{"unset means the default", NginxOperatorSpec{}, 1},
		{"qps rounds up", NginxOperatorSpec{QPS: &QPSSpec{SinglePodQPS: 800, TotalQPS: 2401}}, 4},
		{"qps ignores replicas", NginxOperatorSpec{Replicas: ptr.To[int32](9), QPS: &QPSSpec{SinglePodQPS: 800, TotalQPS: 0}}, 0},
	} {
		if got := tc.spec.DesiredReplicas(); got != tc.want {
			t.Errorf("%s: DesiredReplicas() = %d, want %d", tc.name, got, tc.want)
		}
	}
}
