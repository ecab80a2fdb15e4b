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

package main

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
)

// metricsCertFlag names the directory of the controller's metrics serving certificate.
const metricsCertFlag = "--metrics-cert-dir"

// useSelfSignedMetricsCert drops the controller's metrics certificate flag and the volume
// of its Secret: under OLM nothing creates that Secret (hack/deploy-certs.sh and the
// cert-manager overlay do), so the pods would wait for it forever. Without the flag the
// controller serves /metrics over HTTPS with a self-signed certificate, still behind
// authentication and authorization. A Deployment without the flag is left as it is.
func useSelfSignedMetricsCert(d *appsv1.Deployment) error {
	var dirs []string
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		var args []string
		for _, arg := range c.Args {
			if flag, value, _ := strings.Cut(arg, "="); flag == metricsCertFlag {
				dirs = append(dirs, value)
				continue
			}
			args = append(args, arg)
		}
		c.Args = args
	}
	if len(dirs) == 0 {
		return nil
	}
	return dropVolumesMountedAt(d, dirs)
}
