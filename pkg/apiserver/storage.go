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
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// DefaultStorageMediaType is how objects are written to etcd unless --storage-media-type
// says otherwise: protobuf, as kube-apiserver stores its built-in types (docs/design.md
// has the measurement).
const DefaultStorageMediaType = runtime.ContentTypeProtobuf

// StorageCodec writes v1alpha2 objects to etcd in mediaType. The library's simple storage
// factory ignores --storage-media-type and uses the codec in the storage configuration,
// so the codec is built here. Whatever the setting, it reads JSON, YAML and protobuf
// alike: objects written under an earlier setting stay readable and are rewritten in the
// current one on their next update.
func StorageCodec(mediaType string, config storagebackend.Config) (runtime.Codec, error) {
	codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  mediaType,
		StorageSerializer: Codecs,
		StorageVersion:    v1alpha2.SchemeGroupVersion,
		MemoryVersion:     operator.SchemeGroupVersion,
		Config:            config,
	})
	return codec, err
}
