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
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
)

// servedVersions returns those of versions in which resource (of the internal kind
// newObject makes) is available at the server's emulation version, according to the
// prerelease-lifecycle tags of the versioned types: not yet removed, already
// introduced. The generic server serves whatever it is given; kube-apiserver makes
// the same call. The server's effective version is nginx-operator's, so "removed=0.4"
// means nginx-operator 0.4, whatever the version of the k8s.io libraries.
func servedVersions(s *genericapiserver.GenericAPIServer, resourceConfig *serverstorage.ResourceConfig, versioner runtime.ObjectVersioner,
	resource schema.GroupResource, newObject func() runtime.Object, versions ...string) ([]string, error) {
	if s.EffectiveVersion == nil {
		return nil, fmt.Errorf("the server has no effective version to decide which API versions to serve")
	}
	evaluator, err := genericapiserver.NewResourceExpirationEvaluatorFromOptions(genericapiserver.ResourceExpirationEvaluatorOptions{
		CurrentVersion:                          s.EffectiveVersion.EmulationVersion(),
		Prerelease:                              s.EffectiveVersion.BinaryVersion().PreRelease(),
		EmulationForwardCompatible:              s.EmulationForwardCompatible,
		RuntimeConfigEmulationForwardCompatible: s.RuntimeConfigEmulationForwardCompatible,
	})
	if err != nil {
		return nil, err
	}
	// The evaluator looks only at kinds; stand-ins keep it from building, and then
	// destroying, the storage of a version that is not served.
	candidates := map[string]map[string]rest.Storage{}
	for _, v := range versions {
		candidates[v] = map[string]rest.Storage{resource.Resource: kindOnly{newObject}}
	}
	// A nil *ResourceConfig must not become a non-nil interface.
	var enabled serverstorage.APIResourceConfigSource
	if resourceConfig != nil {
		enabled = resourceConfig
	}
	if err := evaluator.RemoveUnavailableKinds(resource.Group, versioner, candidates, enabled); err != nil {
		return nil, err
	}
	served := make([]string, 0, len(candidates))
	for v := range candidates {
		served = append(served, v)
	}
	sort.Strings(served)
	return served, nil
}

// kindOnly is the part of a resource's storage that the lifecycle evaluator reads.
type kindOnly struct {
	newObject func() runtime.Object
}

func (k kindOnly) New() runtime.Object { return k.newObject() }

func (k kindOnly) Destroy() {}
