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

package apiserver

import (
	"fmt"
	"net"

	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/example/nginx-operator/pkg/standalone"
)

// ApplyStandalone makes the server its own authority, without a cluster: it accepts
// client certificates of the standalone CA only, authorizes system:masters (and anyone on
// the health paths, for probes), and writes an admin kubeconfig into dataDir, whose path
// it returns, for a server on bindIP:port. The serving certificate must already be the PKI's.
func ApplyStandalone(c *genericapiserver.RecommendedConfig, pki *standalone.PKI, dataDir string, bindIP net.IP, port int) (string, error) {
	if err := standalone.ApplySecurity(&c.Config, pki, healthPaths); err != nil {
		return "", err
	}
	file, err := standalone.WriteAdminKubeconfig(dataDir, pki, bindIP, port)
	if err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	return file, nil
}
