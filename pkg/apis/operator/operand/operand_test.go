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

package operand

import (
	"math"
	"testing"
)

func TestReplicasForQPS(t *testing.T) {
	for _, tc := range []struct {
		total, single, want int32
	}{
		{2400, 800, 3},
		{2401, 800, 4},
		{1, 800, 1},
		{0, 800, 0},
		{-5, 800, 0},
		{100, 0, 0},
		{100, -1, 0},
		// The sum must not overflow int32.
		{math.MaxInt32, math.MaxInt32, 1},
		{math.MaxInt32, 1, math.MaxInt32},
		{math.MaxInt32, 2, 1 << 30},
	} {
		if got := ReplicasForQPS(tc.total, tc.single); got != tc.want {
			t.Errorf("ReplicasForQPS(%d, %d) = %d, want %d", tc.total, tc.single, got, tc.want)
		}
	}
}
