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
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// standalonePKI is what --standalone creates under <data-dir>/pki: a CA, a serving
// certificate for localhost and an admin client certificate in system:masters.
type standalonePKI struct {
	ca, serving, admin *keyPair
}

func loadOrCreateStandalonePKI(dataDir string, bindIP net.IP) (*standalonePKI, error) {
	dir := filepath.Join(dataDir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := loadOrCreateCA(dir, "ca")
	if err != nil {
		return nil, fmt.Errorf("standalone CA: %w", err)
	}
	serving, err := loadOrIssue(ca, dir, "apiserver", servingCertTemplate(bindIP))
	if err != nil {
		return nil, fmt.Errorf("standalone serving certificate: %w", err)
	}
	// A certificate from an earlier run with another --bind-address, or from another CA,
	// is replaced rather than served to clients that cannot verify it.
	if host := kubeconfigHost(bindIP); serving.cert.VerifyHostname(host) != nil || serving.cert.CheckSignatureFrom(ca.cert) != nil {
		if err := os.Remove(serving.CertFile); err != nil {
			return nil, err
		}
		if serving, err = loadOrIssue(ca, dir, "apiserver", servingCertTemplate(bindIP)); err != nil {
			return nil, fmt.Errorf("standalone serving certificate: %w", err)
		}
	}
	admin, err := loadOrIssue(ca, dir, "admin", clientCertTemplate("admin", user.SystemPrivilegedGroup))
	if err != nil {
		return nil, fmt.Errorf("standalone admin certificate: %w", err)
	}
	return &standalonePKI{ca: ca, serving: serving, admin: admin}, nil
}

// applyStandaloneSecurity accepts client certificates from the standalone CA only and
// authorizes only system:masters; health endpoints stay open for probes.
func applyStandaloneSecurity(c *genericapiserver.Config, pki *standalonePKI) error {
	caPEM, err := pki.ca.certPEM()
	if err != nil {
		return err
	}
	caContent, err := dynamiccertificates.NewStaticCAContent("standalone-client-ca", caPEM)
	if err != nil {
		return err
	}
	c.Authentication.Authenticator = x509.NewDynamic(caContent.VerifyOptions, x509.CommonNameUserConversion)
	if err := c.Authentication.ApplyClientCert(caContent, c.SecureServing); err != nil {
		return err
	}
	healthz, err := path.NewAuthorizer(healthPaths)
	if err != nil {
		return err
	}
	c.Authorization.Authorizer, err = union.New(
		union.NamedAuthorizer{AuthorizerName: "health-paths", Authorizer: healthz},
		union.NamedAuthorizer{AuthorizerName: "system-masters", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)},
	)
	return err
}

// writeAdminKubeconfig writes <data-dir>/kubeconfig for the admin certificate.
func writeAdminKubeconfig(dataDir string, pki *standalonePKI, bindIP net.IP, port int) (string, error) {
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
