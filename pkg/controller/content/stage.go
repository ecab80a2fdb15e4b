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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// CanaryAnnotation is v1alpha2.CanaryDecisionAnnotation: promote or abort a staged reload.
const CanaryAnnotation = v1alpha2.CanaryDecisionAnnotation

// Stage is what a staged reload asks of one reconcile. Its state lives in the cluster:
// the ConfigMap's two configurations, each pod's include annotation and status.canary;
// a controller that starts in the middle reads it from there.
type Stage struct {
	// Stable and Candidate are the configurations the ConfigMap holds.
	Stable, Candidate string
	// Canary names the pods whose nginx includes the candidate.
	Canary map[string]bool
	// Status is status.canary to write.
	Status *v1alpha2.CanaryStatus
}

// Analyzing reports whether the stage compares canary pods.
func (s Stage) Analyzing() bool {
	return s.Status != nil && s.Status.Phase == v1alpha2.CanaryAnalyzing
}

// ConfigHash is the hash status.canary names a configuration by.
func ConfigHash(config string) string {
	sum := sha256.Sum256([]byte(config))
	return hex.EncodeToString(sum[:8])
}

// PlanStage decides, from the ConfigMap as it is and status.canary, what the ConfigMap
// holds and which pods include the candidate: nothing staged while the spec's
// configuration is the stable one; the stable one alone after a failure; the spec's
// alone once promoted; both while canary pods load and are compared.
func (t *Tracker) PlanStage(ctx context.Context, c Cluster, no *v1alpha2.NginxOperator, pods []corev1.Pod) (Stage, error) {
	spec := no.Spec.Config.Inline
	hash := ConfigHash(spec)
	stable, err := liveStable(ctx, c, no)
	if err != nil {
		return Stage{}, err
	}
	prev := no.Status.Canary.DeepCopy()
	now := metav1.NewTime(c.Clock.Now())
	// end decides the spec's configuration without a comparison: promoted, every pod
	// loads it; failed, none does.
	end := func(phase v1alpha2.CanaryPhase, message string) Stage {
		st := &v1alpha2.CanaryStatus{Hash: hash, Revision: no.Status.Revision, StartTime: &now}
		if prev != nil && prev.Hash == hash {
			st = prev
		}
		st.Phase, st.Message = phase, message
		c.canaryEnded(no, st, false)
		if phase == v1alpha2.CanaryFailed {
			return Stage{Stable: stable, Candidate: stable, Status: st}
		}
		return Stage{Stable: spec, Candidate: spec, Status: st}
	}
	switch {
	case stable == "" || stable == spec:
		// Nothing to stage: the spec's configuration is the stable one (or there is none
		// yet, and the pods start with the spec's). A canary the spec left behind by
		// going back to the stable configuration ends here.
		if prev != nil && prev.Phase == v1alpha2.CanaryAnalyzing {
			if prev.Hash == hash {
				prev.Phase, prev.Message = v1alpha2.CanaryPromoted, "every pod loads it"
			} else {
				prev.Phase, prev.Message = v1alpha2.CanaryFailed, "the spec went back to the stable configuration"
			}
		}
		return Stage{Stable: spec, Candidate: spec, Status: prev}, nil
	case prev != nil && prev.Hash == hash && prev.Phase == v1alpha2.CanaryPromoted:
		return Stage{Stable: spec, Candidate: spec, Status: prev}, nil
	case prev != nil && prev.Hash == hash && prev.Phase == v1alpha2.CanaryFailed:
		return Stage{Stable: stable, Candidate: stable, Status: prev}, nil
	case no.Annotations[CanaryAnnotation] == "abort "+hash:
		return end(v1alpha2.CanaryFailed, fmt.Sprintf("aborted by the %s annotation", CanaryAnnotation)), nil
	case no.Annotations[CanaryAnnotation] == "promote "+hash:
		return end(v1alpha2.CanaryPromoted, fmt.Sprintf("promoted by the %s annotation", CanaryAnnotation)), nil
	}
	running := runningPods(pods)
	k := no.Spec.CanarySettings().CanaryPods(len(running))
	if k == 0 {
		return end(v1alpha2.CanaryPromoted, fmt.Sprintf("%d pods: none to compare a canary with", len(running))), nil
	}
	if prev == nil || prev.Hash != hash || prev.Phase != v1alpha2.CanaryAnalyzing {
		canary := pickCanary(running, k)
		st := &v1alpha2.CanaryStatus{Hash: hash, Revision: no.Status.Revision, Phase: v1alpha2.CanaryAnalyzing,
			StartTime: &now, Pods: sortedNames(canary), Message: fmt.Sprintf("loading on %d of %d pods", k, len(running))}
		c.event(no, corev1.EventTypeNormal, "CanaryStarted", "Stage", "configuration %s (revision %d) goes first to %s", hash, st.Revision, strings.Join(st.Pods, ", "))
		return Stage{Stable: stable, Candidate: spec, Canary: canary, Status: st}, nil
	}
	canary := map[string]bool{}
	for _, p := range running {
		for _, name := range prev.Pods {
			if p.Name == name {
				canary[name] = true
			}
		}
	}
	if len(canary) == 0 {
		// Every canary pod is gone: others start over, with a new window.
		canary = pickCanary(running, k)
		prev.Pods, prev.StartTime, prev.AnalysisStartTime = sortedNames(canary), &now, nil
		prev.Message = "the canary pods are gone: loading on " + strings.Join(prev.Pods, ", ")
	}
	return Stage{Stable: stable, Candidate: spec, Canary: canary, Status: prev}, nil
}

// canaryEnded tells, in an event, how a staged reload ended (st.Phase): a Warning for a
// configuration taken back, or promoted on the health check alone (lowTraffic).
func (c Cluster) canaryEnded(no *v1alpha2.NginxOperator, st *v1alpha2.CanaryStatus, lowTraffic bool) {
	if st.Phase == v1alpha2.CanaryFailed {
		c.event(no, corev1.EventTypeWarning, "CanaryFailed", "TakeBack", "configuration %s (revision %d) taken back from the canary pods: %s", st.Hash, st.Revision, st.Message)
		return
	}
	kind := corev1.EventTypeNormal
	if lowTraffic {
		kind = corev1.EventTypeWarning
	}
	c.event(no, kind, "CanaryPromoted", "Promote", "configuration %s (revision %d) goes to every pod: %s", st.Hash, st.Revision, st.Message)
}

// liveStable is the stable configuration of the ConfigMap this NginxOperator controls;
// "" when there is none yet (or it is not ours, which the ConfigMap step reports).
func liveStable(ctx context.Context, c Cluster, no *v1alpha2.NginxOperator) (string, error) {
	cm := &corev1.ConfigMap{}
	err := c.APIReader.Get(ctx, types.NamespacedName{Namespace: no.Namespace, Name: builders.ConfigMapName(no)}, cm)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != no.UID {
		return "", nil
	}
	return cm.Data[builders.ConfigFileName], nil
}

// runningPods are the pods that serve or will: not deleted, not ended.
func runningPods(pods []corev1.Pod) []corev1.Pod {
	var running []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			running = append(running, p)
		}
	}
	return running
}

// pickCanary picks k pods, ready ones first, then by name: a pod that cannot serve
// would compare nothing.
func pickCanary(pods []corev1.Pod, k int) map[string]bool {
	sorted := append([]corev1.Pod(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool {
		ri, rj := podReady(&sorted[i]), podReady(&sorted[j])
		if ri != rj {
			return ri
		}
		return sorted[i].Name < sorted[j].Name
	})
	picked := map[string]bool{}
	for i := range min(k, len(sorted)) {
		picked[sorted[i].Name] = true
	}
	return picked
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sortedNames(set map[string]bool) []string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
