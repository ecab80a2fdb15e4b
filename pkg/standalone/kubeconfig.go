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

package standalone

import (
	"net"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteAdminKubeconfig writes <data-dir>/kubeconfig for the admin certificate and
// returns its path.
func WriteAdminKubeconfig(dataDir string, pki *PKI, bindIP net.IP, port int) (string, error) {
	server := "https://" + net.JoinHostPort(kubeconfigHost(bindIP), strconv.Itoa(port))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["nginx-operator"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: pki.ca.CertFile}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: pki.admin.CertFile, ClientKey: pki.admin.KeyFile}
	cfg.Contexts["nginx-operator"] = &clientcmdapi.Context{Cluster: "nginx-operator", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "nginx-operator"
	file := filepath.Join(dataDir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		return "", err
	}
	return file, nil
}

// kubeconfigHost is the address clients use: loopback unless the server binds to a
// specific other address.
func kubeconfigHost(bindIP net.IP) string {
	if bindIP == nil || bindIP.IsUnspecified() {
		return "127.0.0.1"
	}
	return bindIP.String()
}
