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

package apply

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
)

// Applied is the object as the server answered an apply Ensure sent: the client decodes
// the response into the apply configuration, so no read is needed, and it is newer than
// the cache.
func Applied[T any](desired runtime.ApplyConfiguration) (*T, error) {
	data, err := json.Marshal(desired)
	if err != nil {
		return nil, err
	}
	out := new(T)
	return out, json.Unmarshal(data, out)
}
