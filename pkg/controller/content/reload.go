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
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
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

// ReloadStateReader reads the state the sidecar of a pod reports (reload.State).
type ReloadStateReader func(ctx context.Context, pod *corev1.Pod) (reload.State, error)

// sidecarClient reads the sidecars. A pod's configuration may take the exporter's port
// and answer for it: so no proxy, and a redirect is an answer other than 200, never
// followed, so the controller's requests go to the pod's IP and port only.
var sidecarClient = &http.Client{
	Transport: func() *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		return t
	}(),
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// HTTPReloadState reads the sidecar's state from the pod's IP, on the exporter's port.
func HTTPReloadState(ctx context.Context, pod *corev1.Pod) (reload.State, error) {
	var state reload.State
	if pod.Status.PodIP == "" {
		return state, fmt.Errorf("pod %s has no IP yet", pod.Name)
	}
	return readSidecarState(ctx, "http://"+net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(operand.MetricsPort))+reload.StatePath)
}

// readSidecarState reads the state at url with sidecarClient.
func readSidecarState(ctx context.Context, url string) (reload.State, error) {
	var state reload.State
	ctx, cancel := context.WithTimeout(ctx, reloadReadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return state, err
	}
	resp, err := sidecarClient.Do(req)
	if err != nil {
		return state, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return state, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return state, json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 64<<10)).Decode(&state)
}

// ReloadObservation is what the sidecars of pods asked for new content said.
type ReloadObservation struct {
	// Pending names the pods that have not loaded it yet; Rejected holds, per pod, why
	// nginx refused it ("pod: message").
	Pending, Rejected []string
}

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

// EnsurePodContent asks every pod of the NginxOperator for the content desired (operand.
// FormatContentHashes of the volumes) by annotating it, and reads how far the pods asked
// for a change are. A pod that gets its first annotation runs what it started with: it
// started after the content was written, so there is nothing to wait for.
func (t *Tracker) EnsurePodContent(ctx context.Context, c Cluster, no *v1alpha2.NginxOperator, desired string, pods []corev1.Pod) (ReloadObservation, time.Duration, error) {
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
		current := pod.Annotations[reload.ContentHashesAnnotation]
		if current != desired {
			if err := c.annotatePod(ctx, pod, map[string]string{reload.ContentHashesAnnotation: desired}); err != nil {
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
		c.event(no, corev1.EventTypeNormal, "ContentReload", "Reload", "asked %d pods to load content %s", asked, desired)
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

// annotatePod merges annotations into a pod's: a pod update, which also makes the
// kubelet refresh the pod's volumes.
func (c Cluster) annotatePod(ctx context.Context, pod *corev1.Pod, annotations map[string]string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	return c.countWrite("Pod", client.IgnoreNotFound(c.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))))
}
