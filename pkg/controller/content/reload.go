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
	"context"
	"encoding/json"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// SyncAnnotation on a pod is rewritten when the pod's volumes still hold older
// content some time after the controller asked for new content: the kubelet refreshes a
// pod's volumes whenever the pod changes, and its ConfigMap cache may have been a moment
// behind the first time.
const SyncAnnotation = "operator.example.com/content-sync"

// Timing of Reload mode. The sidecar looks at the volumes four times a second; nginx
// reloads in milliseconds.
const (
	// PollInterval is how often the controller reads the sidecars of pods that
	// have not loaded the content it asked for.
	PollInterval = time.Second
	// NudgeAfter is how long a pod's volumes may lag before the pod is touched again.
	NudgeAfter = 5 * time.Second
	// GiveUpAfter ends the reading of a sidecar that never answers (no network to
	// the pod from the controller, say): status then no longer waits for that pod.
	GiveUpAfter = 2 * time.Minute
	// reloadReadTimeout bounds one read of a sidecar's state.
	reloadReadTimeout = time.Second
)

// ReloadObservation is what the sidecars of pods asked for new content said.
type ReloadObservation struct {
	// Pending names the pods that have not loaded it yet; Rejected holds, per pod, why
	// nginx refused it ("pod: message").
	Pending, Rejected []string
}

// PodWant is what a pod is asked to load: the annotations the controller sets on it,
// reload.ContentHashesAnnotation (operand.FormatContentHashes of the volumes) and, in a
// staged reload, the include annotation that picks the stable or the candidate file.
type PodWant func(pod *corev1.Pod) map[string]string

// Everywhere asks every pod for the same content hashes.
func Everywhere(desired string) PodWant {
	return func(*corev1.Pod) map[string]string {
		return map[string]string{reload.ContentHashesAnnotation: desired}
	}
}

// EnsurePodContent asks every pod of the NginxOperator for the content want gives it by
// annotating it, and reads how far the pods asked for a change are. A pod that gets its
// first annotation runs what it started with: it started after the content was written,
// so there is nothing to wait for.
func (t *Tracker) EnsurePodContent(ctx context.Context, c Cluster, no *v1alpha2.NginxOperator, want PodWant, pods []corev1.Pod) (ReloadObservation, time.Duration, error) {
	var obs ReloadObservation
	now := c.Clock.Now()
	t.awaited.forgetGone(client.ObjectKeyFromObject(no), pods)
	type read struct {
		pod   *corev1.Pod
		state reload.State
		err   error
	}
	var toRead []*read
	asked := 0
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			t.awaited.forget(pod.UID)
			continue
		}
		wanted := want(pod)
		desired := wanted[reload.ContentHashesAnnotation]
		current := pod.Annotations[reload.ContentHashesAnnotation]
		if !hasAnnotations(pod, wanted) {
			if err := c.annotatePod(ctx, pod, wanted); err != nil {
				return obs, 0, err
			}
			asked++
			if current == "" {
				continue
			}
			t.awaited.put(pod.UID, &awaited{owner: client.ObjectKeyFromObject(no), desired: desired, since: now, nudge: now})
		}
		w := t.awaited.get(pod.UID)
		switch {
		case w == nil:
		case w.desired != desired:
			t.awaited.forget(pod.UID)
		case w.rejected != "":
			obs.Rejected = append(obs.Rejected, pod.Name+": "+w.rejected)
		case now.Sub(w.since) > GiveUpAfter:
			t.awaited.forget(pod.UID)
		default:
			toRead = append(toRead, &read{pod: pod})
		}
	}
	if asked > 0 {
		c.event(no, corev1.EventTypeNormal, "ContentReload", "Reload", "asked %d pods to load new content", asked)
	}
	// The sidecars answer at once or time out: read them side by side.
	stateOf := c.ReloadState
	if stateOf == nil {
		stateOf = HTTPReloadState
	}
	var wg sync.WaitGroup
	for _, rd := range toRead {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd.state, rd.err = stateOf(ctx, rd.pod)
		}()
	}
	wg.Wait()
	waiting := 0
	for _, rd := range toRead {
		w := t.awaited.get(rd.pod.UID)
		if w == nil {
			continue
		}
		desired := w.desired
		switch {
		case rd.err != nil:
			// Not known: status does not wait for what it cannot see, the next poll retries.
		case rd.state.Loaded == desired:
			t.awaited.forget(rd.pod.UID)
			continue
		case rd.state.Rejected == desired:
			w.rejected = rd.state.Message
			t.awaited.put(rd.pod.UID, w)
			obs.Rejected = append(obs.Rejected, rd.pod.Name+": "+w.rejected)
			continue
		case rd.state.Mounted != desired && now.Sub(w.nudge) > NudgeAfter:
			if err := c.annotatePod(ctx, rd.pod, map[string]string{SyncAnnotation: now.UTC().Format(time.RFC3339Nano)}); err != nil {
				return obs, 0, err
			}
			w.nudge = now
			t.awaited.put(rd.pod.UID, w)
		}
		waiting++
		if rd.err == nil {
			obs.Pending = append(obs.Pending, rd.pod.Name)
		}
	}
	var recheck time.Duration
	if waiting > 0 {
		recheck = PollInterval
	}
	return obs, recheck, nil
}

// hasAnnotations reports whether pod carries every annotation of want with its value.
func hasAnnotations(pod *corev1.Pod, want map[string]string) bool {
	for k, v := range want {
		if pod.Annotations[k] != v {
			return false
		}
	}
	return true
}

// annotatePod merges annotations into a pod's: a pod update, which also makes the
// kubelet refresh the pod's volumes.
func (c Cluster) annotatePod(ctx context.Context, pod *corev1.Pod, annotations map[string]string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	return c.countWrite("Pod", client.IgnoreNotFound(c.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))))
}
