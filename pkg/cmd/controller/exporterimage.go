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
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// ExporterImageContainer is the init container of the controller's own Pod that names the
// image of the nginx pods' exporter sidecar. The image is declared there rather than in a
// flag so that whatever rewrites a Pod's images (kustomize images:, Helm values, OLM's
// relatedImages, a release pinning digests, a mirror's admission webhook) rewrites it too,
// and so that a wrong reference stops the controller's rollout (ImagePullBackOff) instead
// of every nginx pod's later. It runs `/nginx-exporter -help`, which exits at once.
const ExporterImageContainer = operand.ExporterContainerName

// DefaultExporterImage is the exporter image of a controller that runs outside a pod
// without --exporter-image (the local stacks): the image `make images` builds for this
// release line (pkg/version; the controller may not import it).
func DefaultExporterImage() string {
	return "localhost/nginx-operator/nginx-exporter:v0.2.0"
}

// exporterImage is --exporter-image, else the image of the init container
// ExporterImageContainer of the controller's own Pod.
func exporterImage(ctx context.Context, reader client.Reader, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	namespace, name := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	if namespace == "" || name == "" {
		return DefaultExporterImage(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pod := &corev1.Pod{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, pod); err != nil {
		return "", fmt.Errorf("reading the controller's own Pod %s/%s for the exporter image (or set --exporter-image): %w", namespace, name, err)
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == ExporterImageContainer {
			return c.Image, nil
		}
	}
	return "", fmt.Errorf("the controller's own Pod %s/%s has no init container %q naming the exporter image (see the controller Deployment of artifacts/deploy); add it or set --exporter-image", namespace, name, ExporterImageContainer)
}
