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

package controller

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/content"
)

func nginxPod(name string, annotations map[string]string) *corev1.Pod {
	labels := builders.SelectorLabels(sample("web"))
	labels[builders.ManagedByLabel] = builders.FieldManager
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name + "-uid"), Labels: labels, Annotations: annotations},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
	}
}

// sidecars plays the pods' sidecars: the state each reports, and the reads made.
type sidecars struct {
	mu     sync.Mutex
	states map[string]reload.State
	reads  []string
}

func (s *sidecars) set(pod string, state reload.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states[pod] = state
}

func (s *sidecars) read(_ context.Context, pod *corev1.Pod) (reload.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, pod.Name)
	state, ok := s.states[pod.Name]
	if !ok {
		return state, errors.New("connection refused")
	}
	return state, nil
}

func (s *sidecars) takeReads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.reads)
	s.reads = nil
	return n
}

func contentOf(conf string) string {
	return reload.FormatContentHashes(map[string]string{builders.ConfigVolumeName: reload.ContentHash(map[string][]byte{builders.ConfigFileName: []byte(conf)})})
}

// TestReloadModeAsksRunningPodsForNewContent walks a content change in Reload mode: the
// Deployment stays as it is, every pod is annotated with the new content, the sidecars
// are read until nginx loaded it, a pod whose volumes lag is touched again, and a
// rejection stalls the NginxOperator with nginx's message.
func TestReloadModeAsksRunningPodsForNewContent(t *testing.T) {
	v1, v2 := "events {}\nhttp {}\n", "events {}\nhttp { server_tokens off; }\n"
	h := newHarness(t, plainReloading("web", v1), nginxPod("web-a", nil), nginxPod("web-b", nil))
	cars := &sidecars{states: map[string]reload.State{}}
	h.r.ReloadState = cars.read
	clock := h.r.Clock.(*clocktesting.FakePassiveClock)
	podContent := func(name string) string {
		pod := &corev1.Pod{}
		h.get(name, pod)
		return pod.Annotations[reload.ContentHashesAnnotation]
	}

	// Pods that started with the content need no reload: annotated, never read.
	writes := strings.Join(h.reconcile("web"), ",")
	if strings.Count(writes, "patch Pod") != 2 {
		t.Fatalf("first reconcile wrote %q, want both pods annotated", writes)
	}
	if podContent("web-a") != contentOf(v1) || cars.takeReads() != 0 {
		t.Fatalf("pod annotation %q, sidecar reads %d", podContent("web-a"), cars.takeReads())
	}
	d := &v1alpha2.NginxOperator{}
	h.get("web", d)
	deployment := h.deployment("web")
	if _, found := deployment.Spec.Template.Annotations[builders.ContentHashAnnotation]; found {
		t.Errorf("the pod template carries %s in Reload mode", builders.ContentHashAnnotation)
	}
	h.deploymentAvailable("web", 2)
	h.reconcile("web")
	if got := h.reconcile("web"); len(got) != 0 || cars.takeReads() != 0 {
		t.Fatalf("steady state wrote %q", got)
	}

	// New content: the pods are annotated, the Deployment is not touched.
	h.get("web", d)
	d.Spec.Config.Inline = v2
	if err := h.client.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	h.writes.take()
	cars.set("web-a", reload.State{Desired: contentOf(v2), Mounted: contentOf(v1), Loaded: contentOf(v1)})
	cars.set("web-b", reload.State{Desired: contentOf(v2), Mounted: contentOf(v2), Loaded: contentOf(v2)})
	writes = strings.Join(h.reconcile("web"), ",")
	if strings.Contains(writes, "Deployment") || strings.Count(writes, "patch Pod") != 2 {
		t.Fatalf("content change wrote %q, want the two pods patched and no Deployment", writes)
	}
	if podContent("web-a") != contentOf(v2) || podContent("web-b") != contentOf(v2) {
		t.Fatalf("pods ask for %q and %q", podContent("web-a"), podContent("web-b"))
	}
	h.get("web", d)
	if c := apimeta.FindStatusCondition(d.Status.Conditions, v1alpha2.ConditionProgressing); c == nil || c.Reason != v1alpha2.ReasonReloadInProgress || !strings.Contains(c.Message, "web-a") || strings.Contains(c.Message, "web-b") {
		t.Fatalf("Progressing = %+v, want web-a reloading", c)
	}
	if cars.takeReads() != 2 {
		t.Error("both sidecars should have been read once")
	}

	// web-b is done and no longer read; web-a's volumes lag: touched again once the nudge
	// delay has passed, and not before.
	if got := strings.Join(h.reconcile("web"), ","); strings.Contains(got, "patch Pod") || cars.takeReads() != 1 {
		t.Fatalf("within the nudge delay: wrote %q", got)
	}
	clock.SetTime(clock.Now().Add(content.NudgeAfter + time.Second))
	if got := strings.Join(h.reconcile("web"), ","); got != "patch Pod" {
		t.Fatalf("after the nudge delay wrote %q, want web-a touched", got)
	}
	pod := &corev1.Pod{}
	h.get("web-a", pod)
	if pod.Annotations[content.SyncAnnotation] == "" {
		t.Errorf("web-a's annotations: %v", pod.Annotations)
	}

	// nginx in web-a rejects it: stalled with nginx's message, and no longer read.
	cars.set("web-a", reload.State{Desired: contentOf(v2), Mounted: contentOf(v2), Loaded: contentOf(v1), Rejected: contentOf(v2),
		Message: `[emerg] unknown directive "server_tokenz"`})
	h.reconcile("web")
	h.get("web", d)
	c := apimeta.FindStatusCondition(d.Status.Conditions, v1alpha2.ConditionStalled)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha2.ReasonConfigurationRejected || !strings.Contains(c.Message, `web-a: [emerg] unknown directive "server_tokenz"`) {
		t.Fatalf("Stalled = %+v", c)
	}
	cars.takeReads()
	if got := h.reconcile("web"); len(got) != 0 || cars.takeReads() != 0 {
		t.Fatalf("a rejected pod is read again or written: %q", got)
	}

	// Fixed content: asked again, loaded, Ready.
	h.get("web", d)
	d.Spec.Config.Inline = v1
	if err := h.client.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	cars.set("web-a", reload.State{Desired: contentOf(v1), Mounted: contentOf(v1), Loaded: contentOf(v1)})
	cars.set("web-b", reload.State{Desired: contentOf(v1), Mounted: contentOf(v1), Loaded: contentOf(v1)})
	h.reconcile("web")
	h.get("web", d)
	if c := apimeta.FindStatusCondition(d.Status.Conditions, v1alpha2.ConditionStalled); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("Stalled after the fix = %+v", c)
	}
}

// TestReloadModeDoesNotWaitForSidecarsItCannotReach: a sidecar that does not answer
// leaves status alone, is read again, and is given up after reloadGiveUpAfter.
func TestReloadModeDoesNotWaitForSidecarsItCannotReach(t *testing.T) {
	no := plainReloading("web", "events {}\n")
	h := newHarness(t, no, nginxPod("web-a", map[string]string{reload.ContentHashesAnnotation: "config=old"}))
	cars := &sidecars{states: map[string]reload.State{}}
	h.r.ReloadState = cars.read
	clock := h.r.Clock.(*clocktesting.FakePassiveClock)
	result, err := h.r.Reconcile(context.Background(), requestFor("web"))
	if err != nil || result.RequeueAfter != content.PollInterval {
		t.Fatalf("reconcile: %+v, %v; want a poll after %s", result, err, content.PollInterval)
	}
	d := &v1alpha2.NginxOperator{}
	h.get("web", d)
	if c := apimeta.FindStatusCondition(d.Status.Conditions, v1alpha2.ConditionProgressing); c != nil && c.Reason == v1alpha2.ReasonReloadInProgress {
		t.Errorf("an unreachable sidecar is reported as reloading: %+v", c)
	}
	clock.SetTime(clock.Now().Add(content.GiveUpAfter + time.Second))
	cars.takeReads()
	h.reconcile("web")
	if n := cars.takeReads(); n != 0 {
		t.Errorf("the sidecar is still read after %s: %d reads", content.GiveUpAfter, n)
	}
}

// TestReloadModeForgetsPodsThatAreGone: a pod deleted while the controller waited for its
// reload leaves nothing in memory.
func TestReloadModeForgetsPodsThatAreGone(t *testing.T) {
	h := newHarness(t, plainReloading("web", "events {}\n"), nginxPod("web-a", map[string]string{reload.ContentHashesAnnotation: "config=old"}))
	h.r.ReloadState = (&sidecars{states: map[string]reload.State{}}).read
	h.reconcile("web")
	if n := h.r.tracker.Awaited(); n != 1 {
		t.Fatalf("%d pods awaited after the content change, want web-a", n)
	}
	pod := &corev1.Pod{}
	h.get("web-a", pod)
	if err := h.client.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	h.reconcile("web")
	if n := h.r.tracker.Awaited(); n != 0 {
		t.Errorf("%d pods still awaited after web-a was deleted", n)
	}

	// And a deleted NginxOperator leaves nothing either.
	if err := h.client.Create(context.Background(), nginxPod("web-b", map[string]string{reload.ContentHashesAnnotation: "config=old"})); err != nil {
		t.Fatal(err)
	}
	h.reconcile("web")
	no := &v1alpha2.NginxOperator{}
	h.get("web", no)
	if n := h.r.tracker.Awaited(); n != 1 {
		t.Fatalf("%d pods awaited, want web-b", n)
	}
	if err := h.client.Delete(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	h.reconcile("web")
	if n := h.r.tracker.Awaited(); n != 0 {
		t.Errorf("%d pods still awaited after the NginxOperator was deleted", n)
	}
}

// TestRolloutModeLeavesPodsAlone: without Reload the pods are never annotated nor read.
func TestRolloutModeLeavesPodsAlone(t *testing.T) {
	no := plainReloading("web", "events {}\n")
	no.Spec.ContentUpdate = v1alpha2.ContentUpdateRollout
	h := newHarness(t, no, nginxPod("web-a", nil))
	cars := &sidecars{states: map[string]reload.State{}}
	h.r.ReloadState = cars.read
	if writes := strings.Join(h.reconcile("web"), ","); strings.Contains(writes, "Pod") || cars.takeReads() != 0 {
		t.Fatalf("Rollout mode wrote %q", writes)
	}
	if _, found := h.deployment("web").Spec.Template.Annotations[builders.ContentHashAnnotation]; !found {
		t.Errorf("Rollout mode's template lacks %s", builders.ContentHashAnnotation)
	}
}

func requestFor(name string) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: name}}
}

func (h *harness) deployment(name string) *appsv1.Deployment {
	h.t.Helper()
	d := &appsv1.Deployment{}
	h.get(name, d)
	return d
}
