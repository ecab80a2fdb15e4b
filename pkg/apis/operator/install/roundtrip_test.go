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

package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"

	operatorfuzzer "github.com/example/nginx-operator/pkg/apis/operator/fuzzer"
)

// TestRoundTripTypes fuzzes internal objects through every external version and back, and
// external objects through JSON and protobuf; v1alpha1 must lose nothing. The protobuf
// variant is used on purpose: RoundTripTestForAPIGroup skips protobuf.
// TestExternalTypesSpeakProtobuf makes sure there is protobuf to test.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripProtobufTestForAPIGroup(t, Install, operatorfuzzer.Funcs)
}
