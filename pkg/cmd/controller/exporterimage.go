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
)

// ContainerName is the controller's container in its own Pod, whose image the exporter
// sidecars run unless --exporter-image names another.
const ContainerName = "controller"

// DefaultExporterImage is the exporter image of a controller that runs outside a pod
// without --exporter-image (the local stacks): the operator image `make images` builds
// for this release line (pkg/version; the controller may not import it).
func DefaultExporterImage() string {
	return "localhost/nginx-operator:v0.2.0"
}

// exporterImage is --exporter-image, else the image of the controller's own container
// (the operator image holds /nginx-exporter too), so that an overlay, a Helm value or
// OLM that points the controller at another registry moves the sidecars with it.
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
	for _, c := range pod.Spec.Containers {
		if c.Name == ContainerName || len(pod.Spec.Containers) == 1 {
			return c.Image, nil
		}
	}
	return "", fmt.Errorf("the controller's own Pod %s/%s has no container %q to take the exporter image from; set --exporter-image", namespace, name, ContainerName)
}
