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

// Package server turns the apiserver's command line into a running server:
// Options → flags → Complete → Validate → Config → Run, as k8s.io/sample-apiserver's
// pkg/cmd/server does.
package server

import (
	"io"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/example/nginx-operator/pkg/admission/quota"
	"github.com/example/nginx-operator/pkg/admission/requester"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/apiserver"
	"github.com/example/nginx-operator/pkg/version"
)

const etcdPathPrefix = "/registry/operator.example.com"

// Options are the command-line options of the apiserver.
type Options struct {
	ServerRun   *genericoptions.ServerRunOptions
	Recommended *genericoptions.RecommendedOptions
	// ComponentGlobalsRegistry holds the effective versions and feature gates of
	// nginx-operator and of the Kubernetes libraries ("kube").
	ComponentGlobalsRegistry basecompatibility.ComponentGlobalsRegistry

	// Standalone serves without a kube-apiserver: its own CA, client certificates, system:masters only.
	Standalone bool
	// DataDir holds the embedded etcd data and, in standalone mode, the PKI and kubeconfig.
	// Empty unless given: the embedded etcd is never a silent fallback.
	DataDir string
	// PrintVersion prints the version and quits.
	PrintVersion bool
	// ResourceWideAuthorization answers a request for a named object from an allow for its
	// verb on every object of the resource (apiserver.ResourceWideFirst).
	ResourceWideAuthorization bool

	Out io.Writer
}

// maxRequestBodyBytes refuses larger request bodies with 413 before decoding them, in
// place of the generic server's 3 MiB, which is above etcd's 1.5 MiB request limit. An
// NginxOperator's metadata and spec may take 256 KiB of JSON (the registry's
// MaxObjectBytes, a 422 naming the field); 1 MiB leaves room for indented JSON or YAML,
// a status sent along, and kubectl's client-side apply, whose patch carries the
// last-applied configuration besides the object.
const maxRequestBodyBytes = 1024 * 1024

// NewOptions returns options with the defaults of an aggregated API server.
// registry is compatibility.DefaultComponentGlobalsRegistry in the binary; tests pass
// their own. It fails only for a binary stamped with a version that is not semantic.
func NewOptions(out io.Writer, registry basecompatibility.ComponentGlobalsRegistry) (*Options, error) {
	binary, err := version.Binary()
	if err != nil {
		return nil, err
	}
	return newOptions(out, registry, binary), nil
}

func newOptions(out io.Writer, registry basecompatibility.ComponentGlobalsRegistry, binary *utilversion.Version) *Options {
	registerComponents(registry, binary)
	o := &Options{
		ServerRun:                 genericoptions.NewServerRunOptionsForComponent(version.ComponentName, registry),
		Recommended:               genericoptions.NewRecommendedOptions(etcdPathPrefix, apiserver.Codecs.LegacyCodec(v1alpha2.SchemeGroupVersion)),
		ComponentGlobalsRegistry:  registry,
		ResourceWideAuthorization: true,
		Out:                       out,
	}
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(v1alpha2.SchemeGroupVersion, schema.GroupKind{Group: v1alpha2.GroupName})
	o.Recommended.Etcd.DefaultStorageMediaType = apiserver.DefaultStorageMediaType
	o.Recommended.SecureServing.BindPort = 8443
	// Without it, open watches (kube-controller-manager keeps several through the
	// aggregator) hold a graceful shutdown for the full request timeout.
	o.ServerRun.ShutdownWatchTerminationGracePeriod = 5 * time.Second
	o.ServerRun.MaxRequestBodyBytes = maxRequestBodyBytes
	// Unauthenticated requests get 401 except on health endpoints (anonymousOnlyForHealth),
	// which kubelet probes reach without credentials, sub-paths such as /readyz/etcd included.
	o.Recommended.Authorization.AlwaysAllowPaths = apiserver.HealthPaths()
	// What a spec makes the controller do is authorized as its writer (pkg/admission/requester).
	requester.Register(o.Recommended.Admission.Plugins)
	// The cluster's ResourceQuotas count NginxOperators, last as in kube-apiserver: only a
	// request every other plugin accepted is charged.
	quota.Register(o.Recommended.Admission.Plugins)
	o.Recommended.Admission.RecommendedPluginOrder = append(o.Recommended.Admission.RecommendedPluginOrder, requester.PluginName, quota.PluginName)
	o.Recommended.ExtraAdmissionInitializers = func(c *genericapiserver.RecommendedConfig) ([]admission.PluginInitializer, error) {
		quotaConfiguration, err := quota.NewInitializer(c.LoopbackClientConfig)
		if err != nil {
			return nil, err
		}
		return []admission.PluginInitializer{quotaConfiguration}, nil
	}
	return o
}

// AddFlags registers the flags of the apiserver.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.ServerRun.AddUniversalFlags(fs)
	o.Recommended.AddFlags(fs)
	fs.Lookup("etcd-servers").Usage += " Required unless --data-dir asks for an embedded etcd."
	fs.Lookup("encryption-provider-config").Usage += ". Here it encrypts nginxoperators.operator.example.com, as kube-apiserver does a CRD's objects (docs/security.md, Encryption at rest)."
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, ""+
		"Directory for local state, created if missing; no default. Without --etcd-servers, setting it runs an "+
		"embedded single-member etcd with its data in DIR/etcd: for local development and tests only, never for "+
		"more than one replica, whose stores would diverge. With --standalone it also holds the PKI (DIR/pki) and "+
		"an admin kubeconfig (DIR/kubeconfig). Without --etcd-servers and without --data-dir the server refuses to start.")
	fs.BoolVar(&o.Standalone, "standalone", o.Standalone, ""+
		"Serve without a kube-apiserver: create a CA, a serving certificate and an admin kubeconfig under --data-dir, "+
		"accept client certificates from that CA only and authorize only the group system:masters. Requires --data-dir.")
	fs.BoolVar(&o.PrintVersion, "version", o.PrintVersion, "Print the nginx-operator version and quit.")
	fs.BoolVar(&o.ResourceWideAuthorization, "authorization-resource-wide-first", o.ResourceWideAuthorization, ""+
		"For a request about a named object, first ask the delegated authorizer about the same verb on every object of the "+
		"resource, and let an allow for that answer the request: one cached SubjectAccessReview then serves every name. "+
		"Grants for named objects only still work through the exact question. Turn it off if an authorization webhook of "+
		"the cluster denies particular names that its other authorizers allow for the whole resource.")
}
