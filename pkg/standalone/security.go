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
	"k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/path"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// ApplySecurity accepts client certificates from the standalone CA only and authorizes
// only system:masters, and anyone on alwaysAllowPaths (the health endpoints, for probes).
func ApplySecurity(c *genericapiserver.Config, pki *PKI, alwaysAllowPaths []string) error {
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
	healthz, err := path.NewAuthorizer(alwaysAllowPaths)
	if err != nil {
		return err
	}
	c.Authorization.Authorizer, err = union.New(
		union.NamedAuthorizer{AuthorizerName: "health-paths", Authorizer: healthz},
		union.NamedAuthorizer{AuthorizerName: "system-masters", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)},
	)
	return err
}
