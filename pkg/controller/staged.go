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
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/content"
)

// planStage plans the staged reload of a staged spec (nil otherwise), and makes the
// config volume's hash the one of the ConfigMap it plans: the stable configuration and
// the candidate. An error is one of reading what the pods mount.
func (r *Reconciler) planStage(ctx context.Context, no *v1alpha2.NginxOperator, pods []corev1.Pod, mounted *content.Mounted, contentErr error) (*content.Stage, error) {
	if contentErr != nil || !builders.Stages(&no.Spec) {
		return nil, contentErr
	}
	stage, err := r.tracker.PlanStage(ctx, r.cluster(), no, pods)
	if err != nil {
		return nil, fmt.Errorf("reading the staged configuration: %w", err)
	}
	mounted.Volumes[builders.ConfigVolumeName] = reload.ContentHash(builders.StagedConfigFiles(stage.Stable, stage.Candidate))
	return &stage, nil
}

// stagedHashes is what a pod of a staged reload is asked to load: the volumes, and the
// include file of the candidate (canary) or of the stable configuration.
func stagedHashes(volumes map[string]string, canary bool) string {
	hashes := maps.Clone(volumes)
	hashes[reload.IncludeVolume] = reload.ContentHash(map[string][]byte{reload.IncludeVolume: []byte(builders.Include(canary))})
	return reload.FormatContentHashes(hashes)
}

// stagedWant asks the canary pods of stage for the candidate, the others for the
// stable configuration.
func stagedWant(volumes map[string]string, stage *content.Stage) content.PodWant {
	stable, candidate := stagedHashes(volumes, false), stagedHashes(volumes, true)
	return func(pod *corev1.Pod) map[string]string {
		if stage.Canary[pod.Name] {
			return map[string]string{reload.ContentHashesAnnotation: candidate, builders.IncludeAnnotation: builders.Include(true)}
		}
		return map[string]string{reload.ContentHashesAnnotation: stable, builders.IncludeAnnotation: builders.Include(false)}
	}
}

// sooner is the earlier of two rechecks, 0 being none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
