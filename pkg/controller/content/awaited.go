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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// awaited is a pod the controller asked for new content, until its sidecar says nginx
// loaded or rejected it.
type awaited struct {
	// owner is the NginxOperator whose pod it is: its entries for pods gone are dropped.
	owner        types.NamespacedName
	desired      string
	since, nudge time.Time
	// rejected is nginx's message once it refused desired; the pod is no longer read.
	rejected string
}

// awaitedPods remembers, by pod UID, the pods asked for new content. It lives in memory:
// a controller that restarts reads them again at the next content change.
type awaitedPods struct {
	mu sync.Mutex
	m  map[types.UID]*awaited
}

func (a *awaitedPods) get(uid types.UID) *awaited {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m[uid] == nil {
		return nil
	}
	copied := *a.m[uid]
	return &copied
}

func (a *awaitedPods) put(uid types.UID, w *awaited) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[types.UID]*awaited{}
	}
	a.m[uid] = w
}

func (a *awaitedPods) forget(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, uid)
}

// forgetGone drops owner's entries for pods that are no longer among its pods: a pod
// deleted before it answered must not stay in memory.
func (a *awaitedPods) forgetGone(owner types.NamespacedName, pods []corev1.Pod) {
	listed := make(map[types.UID]bool, len(pods))
	for i := range pods {
		listed[pods[i].UID] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for uid, w := range a.m {
		if w.owner == owner && !listed[uid] {
			delete(a.m, uid)
		}
	}
}

// len is the number of pods awaited.
func (a *awaitedPods) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m)
}
