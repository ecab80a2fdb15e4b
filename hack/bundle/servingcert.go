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
	"fmt"
	"path"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Where OLM v0 mounts the serving certificate it issues for an owned API service
// (volume "apiservice-cert", from the Secret <deploymentName>-service-cert; see
// AddDefaultCertVolumeAndVolumeMounts in OLM's pkg/controller/install). It rotates the
// certificate in that Secret, and the apiserver reloads the files without a restart.
const (
	olmCertDir  = "/apiserver.local.config/certificates"
	olmCertFile = olmCertDir + "/apiserver.crt"
	olmKeyFile  = olmCertDir + "/apiserver.key"
)

// useOLMServingCert points the apiserver at the certificate OLM mounts and drops the
// volume of the base's own serving certificate: under OLM nothing creates that Secret
// (hack/deploy-certs.sh and the cert-manager overlay are the other install paths), so
// the pods would wait for it forever.
func useOLMServingCert(d *appsv1.Deployment) error {
	certFlags := map[string]string{"--tls-cert-file": olmCertFile, "--tls-private-key-file": olmKeyFile}
	var oldDirs []string
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		for j, arg := range c.Args {
			flag, value, ok := strings.Cut(arg, "=")
			if olmPath, isCertFlag := certFlags[flag]; ok && isCertFlag {
				oldDirs = append(oldDirs, path.Dir(value))
				c.Args[j] = flag + "=" + olmPath
			}
		}
	}
	if len(oldDirs) != len(certFlags) {
		return fmt.Errorf("Deployment %s: expected --tls-cert-file=... and --tls-private-key-file=... once each in its container args, found %d", d.Name, len(oldDirs))
	}

	return dropVolumesMountedAt(d, oldDirs)
}

// dropVolumesMountedAt removes the volumes mounted at dirs from d's containers and pod.
func dropVolumesMountedAt(d *appsv1.Deployment, dirs []string) error {
	var oldVolumes []string
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			if slices.Contains(dirs, m.MountPath) {
				oldVolumes = append(oldVolumes, m.Name)
				return true
			}
			return false
		})
	}
	if len(oldVolumes) == 0 {
		return fmt.Errorf("Deployment %s: no volume is mounted at %v, where its certificate is read", d.Name, dirs)
	}
	d.Spec.Template.Spec.Volumes = slices.DeleteFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return slices.Contains(oldVolumes, v.Name)
	})
	return nil
}
