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

package server

import (
	"k8s.io/apimachinery/pkg/runtime"
	serverstorage "k8s.io/apiserver/pkg/server/storage"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/apiserver"
)

// defaultStorageMediaType is how objects are written to etcd unless --storage-media-type
// says otherwise: protobuf, as kube-apiserver stores its built-in types (docs/design.md
// has the measurement).
const defaultStorageMediaType = runtime.ContentTypeProtobuf

// applyStorageMediaType makes the etcd codec write --storage-media-type. The library's
// simple storage factory ignores that flag and uses the codec it was given, so the codec
// is built here, once the flag is parsed. Whatever the setting, it reads JSON, YAML and
// protobuf alike: objects written under an earlier setting stay readable and are
// rewritten in the current one on their next update.
func (o *Options) applyStorageMediaType() error {
	codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  o.Recommended.Etcd.DefaultStorageMediaType,
		StorageSerializer: apiserver.Codecs,
		StorageVersion:    v1alpha2.SchemeGroupVersion,
		MemoryVersion:     operator.SchemeGroupVersion,
		Config:            o.Recommended.Etcd.StorageConfig,
	})
	if err != nil {
		return err
	}
	o.Recommended.Etcd.StorageConfig.Codec = codec
	return nil
}
