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

package content

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// digests remembers each mounted object's digest by resourceVersion: the metadata cache
// tells whether it changed, so the object itself is read from the API server only when it
// did, not on every reconcile (pod events reconcile often while pods start). An entry is
// dropped when its object is gone; the map holds at most one digest per mounted object
// and key, a few dozen bytes each.
type digests struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[mountRef]digest
}

func (d *digests) get(nn types.NamespacedName, ref mountRef) (digest, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	got, ok := d.m[nn][ref]
	return got, ok
}

func (d *digests) put(nn types.NamespacedName, ref mountRef, v digest) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[types.NamespacedName]map[mountRef]digest{}
	}
	if d.m[nn] == nil {
		d.m[nn] = map[mountRef]digest{}
	}
	d.m[nn][ref] = v
}

func (d *digests) forget(nn types.NamespacedName, ref mountRef) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.m[nn], ref)
	if len(d.m[nn]) == 0 {
		delete(d.m, nn)
	}
}
