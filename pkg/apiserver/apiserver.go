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
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/features"
	"github.com/example/nginx-operator/pkg/registry/etcderrors"
	"github.com/example/nginx-operator/pkg/registry/nginxoperator"
)

// Config is the configuration of the server. GenericConfig.EffectiveVersion must be
// nginx-operator's: it decides which API versions are served.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	// FeatureGate is nginx-operator's (pkg/features), at the emulated release; nil means
	// every gate at its default for this binary's release (New refuses a server without
	// an effective version anyway).
	FeatureGate featuregate.FeatureGate
}

// CompletedConfig can only be built by Complete.
type CompletedConfig struct {
	generic     genericapiserver.CompletedConfig
	featureGate featuregate.FeatureGate
	// cluster is kube-apiserver's client configuration; nil in standalone mode.
	cluster *restclient.Config
}

// Server is the running nginx-operator API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// Complete fills in defaults of the generic configuration and this server's policies:
// unauthenticated requests get 401 except on the health paths, which the in-flight
// limit also spares when priority and fairness is off (standalone).
func (c *Config) Complete() CompletedConfig {
	// Without an authenticator (some unit tests) the library leaves authentication out.
	if c.GenericConfig.Authentication.Authenticator != nil {
		c.GenericConfig.Authentication.Authenticator = anonymousOnlyForHealth{delegate: c.GenericConfig.Authentication.Authenticator}
	}
	if c.GenericConfig.FlowControl == nil {
		c.GenericConfig.LongRunningFunc = exemptHealthFromInFlightLimit(c.GenericConfig.LongRunningFunc)
	}
	renames := releaseNamedDeprecations(Scheme, operator.GroupName)
	c.GenericConfig.BuildHandlerChainFunc = withInnermost(c.GenericConfig.BuildHandlerChainFunc, func(api http.Handler) http.Handler {
		return renameWarnings(withListWriteBuffer(api), renames)
	})
	gate := c.FeatureGate
	if gate == nil && c.GenericConfig.EffectiveVersion != nil {
		gate = features.NewFeatureGate(c.GenericConfig.EffectiveVersion.BinaryVersion())
	}
	return CompletedConfig{generic: c.GenericConfig.Complete(), featureGate: gate, cluster: c.GenericConfig.ClientConfig}
}

// withInnermost runs wrap's filters inside the generic chain, where the request already
// carries its request info and warning recorder.
func withInnermost(build func(http.Handler, *genericapiserver.Config) http.Handler, wrap func(http.Handler) http.Handler) func(http.Handler, *genericapiserver.Config) http.Handler {
	if build == nil {
		build = genericapiserver.DefaultBuildHandlerChain
	}
	return func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
		return build(wrap(apiHandler), c)
	}
}

// New builds the server and installs the operator.example.com group in every version
// that is available at the emulated nginx-operator release.
func (c CompletedConfig) New() (*Server, error) {
	generic, err := c.generic.New("nginx-operator-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}

	resource := operator.Resource("nginxoperators")
	// The versions and their priority are defined once, where the scheme learns them
	// (pkg/apis/operator/install).
	var known []string
	for _, gv := range Scheme.PrioritizedVersionsForGroup(operator.GroupName) {
		known = append(known, gv.Version)
	}
	versions, err := servedVersions(generic, c.generic.MergedResourceConfig, Scheme, resource,
		func() runtime.Object { return &operator.NginxOperator{} }, known...)
	if err != nil {
		return nil, err
	}
	writes := nginxoperator.Writes{Authorizer: c.generic.Authorization.Authorizer}
	if v, ok := c.generic.AdmissionControl.(admission.ValidationInterface); ok {
		writes.Admission = v
	}
	if c.cluster != nil {
		if writes.Cluster, err = kubernetes.NewForConfig(c.cluster); err != nil {
			return nil, fmt.Errorf("a client of the cluster for the rendered view: %w", err)
		}
	}
	storage, err := nginxoperator.NewStorage(Scheme, etcderrors.RESTOptionsGetter(c.generic.RESTOptionsGetter), c.featureGate, writes)
	if err != nil {
		return nil, fmt.Errorf("creating nginxoperators storage: %w", err)
	}
	group := newAPIGroupInfo()
	for _, version := range versions {
		resources := map[string]rest.Storage{
			resource.Resource:             storage.NginxOperator,
			resource.Resource + "/status": storage.Status,
			resource.Resource + "/scale":  storage.Scale,
		}
		// Revisions and rollback came with v1alpha2; the deprecated v1alpha1 has neither.
		if version != "v1alpha1" {
			resources[resource.Resource+"/rollback"] = storage.Rollback
			resources[resource.Resource+"/rendered"] = storage.Rendered
			resources["nginxoperatorrevisions"] = storage.Revisions
		}
		group.VersionedResourcesStorageMap[version] = resources
	}
	if err := generic.InstallAPIGroup(&group); err != nil {
		return nil, err
	}
	return &Server{GenericAPIServer: generic}, nil
}

// newAPIGroupInfo is the library's default group info, unchanged: its serializer streams
// JSON and protobuf lists item by item and adds CBOR when the CBORServingAndStorage feature
// gate is on. Replacing its NegotiatedSerializer would silently drop both.
func newAPIGroupInfo() genericapiserver.APIGroupInfo {
	return genericapiserver.NewDefaultAPIGroupInfo(operator.GroupName, Scheme, metav1.ParameterCodec, Codecs)
}
