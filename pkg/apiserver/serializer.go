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

package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// withoutProtobuf hides the protobuf serializer: the API types have no protobuf
// marshalers, so offering it would turn protobuf requests into 500s. Hidden, a
// protobuf-only Accept gets 406 and a protobuf body gets 415; clients that list
// JSON as a fallback (kube-controller-manager's metadata client) get JSON.
type withoutProtobuf struct {
	runtime.NegotiatedSerializer
}

func (s withoutProtobuf) SupportedMediaTypes() []runtime.SerializerInfo {
	all := s.NegotiatedSerializer.SupportedMediaTypes()
	kept := make([]runtime.SerializerInfo, 0, len(all))
	for _, info := range all {
		if info.MediaType != runtime.ContentTypeProtobuf {
			kept = append(kept, info)
		}
	}
	return kept
}
