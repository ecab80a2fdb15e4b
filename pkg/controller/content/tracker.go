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

// Package content is the controller's content and reload state machine: it hashes what an
// NginxOperator mounts from ConfigMaps and Secrets (a change rolls the pods, or in Reload
// mode reaches them in place), and in Reload mode asks each pod for new content, reads its
// sidecar until nginx loaded or rejected it, and nudges a pod whose volumes lag. Its
// memory, a Tracker, lives in the Reconciler.
package content

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Tracker remembers, between reconciles, the digests of mounted objects and the pods
// asked for new content. The zero value is ready; it is safe for concurrent reconciles.
type Tracker struct {
	// digests of the mounted ConfigMaps and Secrets, by resourceVersion.
	digests digests
	// awaited are the pods asked for new content in Reload mode.
	awaited awaitedPods
}

// Cluster is what a Tracker reads and writes through, and whom it tells.
type Cluster struct {
	// Client reads the metadata of ConfigMaps and Secrets from the cache and patches pods.
	Client client.Client
	// APIReader reads a mounted object's content, uncached.
	APIReader client.Reader
	Clock     clock.PassiveClock
	// ReloadState reads a pod's sidecar (nil: HTTPReloadState).
	ReloadState ReloadStateReader
	// Traffic reads a pod's traffic from its sidecar (nil: HTTPTraffic).
	Traffic TrafficReader
	// Event, when set, records an event about the NginxOperator.
	Event func(owner client.Object, eventType, reason, action, note string, args ...any)
	// CountWrite, when set, records the outcome of one write of kind and returns err.
	CountWrite func(kind string, err error) error
}

// ForgetGone drops owner's awaited pods that are no longer among pods (nil: all of them,
// when the NginxOperator is gone).
func (t *Tracker) ForgetGone(owner types.NamespacedName, pods []corev1.Pod) {
	t.awaited.forgetGone(owner, pods)
}

// Awaited is the number of pods asked for new content whose answer is still awaited.
func (t *Tracker) Awaited() int {
	return t.awaited.len()
}

func (c Cluster) event(owner client.Object, eventType, reason, action, note string, args ...any) {
	if c.Event != nil {
		c.Event(owner, eventType, reason, action, note, args...)
	}
}

func (c Cluster) countWrite(kind string, err error) error {
	if c.CountWrite != nil {
		return c.CountWrite(kind, err)
	}
	return err
}
