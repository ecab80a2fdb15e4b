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

// Package decorate puts a storage.Interface of this project's around the storage a
// registry's RESTOptions build (the watch cache over etcd).
package decorate

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// Storage returns a getter whose RESTOptions.Decorator wraps the storage it builds with
// wrap. It must be given to the store before CompleteWithOptions: the store starts
// goroutines on its storage then, so the storage cannot be replaced afterwards.
func Storage(getter generic.RESTOptionsGetter, wrap func(storage.Interface) storage.Interface) generic.RESTOptionsGetter {
	return optionsGetter{getter, wrap}
}

type optionsGetter struct {
	generic.RESTOptionsGetter
	wrap func(storage.Interface) storage.Interface
}

func (g optionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	decorate := opts.Decorator
	opts.Decorator = func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrs storage.AttrFunc, triggers storage.IndexerFuncs, indexers *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := decorate(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrs, triggers, indexers)
		if err != nil {
			return nil, nil, err
		}
		return g.wrap(s), destroy, nil
	}
	return opts, nil
}
