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

package server

import (
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/example/nginx-operator/pkg/features"
	"github.com/example/nginx-operator/pkg/version"
)

// registerComponents registers nginx-operator at release binary next to the Kubernetes
// libraries ("kube"), and makes kube's emulation version follow nginx-operator's, as
// k8s.io/sample-apiserver does for its "wardle" component. --emulated-version then
// takes nginx-operator releases (nginx-operator=0.1) and kube cannot be set apart.
// A registry that already knows nginx-operator is left as it is.
func registerComponents(registry basecompatibility.ComponentGlobalsRegistry, binary *utilversion.Version) {
	if registry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent) == nil {
		utilruntime.Must(registry.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate))
	}
	if registry.EffectiveVersionFor(version.ComponentName) != nil {
		return
	}
	// nginx-operator's gates follow its emulation version (pkg/features).
	utilruntime.Must(registry.Register(version.ComponentName, version.NewEffectiveVersion(binary), features.NewFeatureGate(binary)))
	kubeBinary := registry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).BinaryVersion()
	utilruntime.Must(registry.SetVersionMapping(version.ComponentName, basecompatibility.DefaultKubeComponent, kubeVersionFor(kubeBinary)))
}

// kubeVersionFor maps every nginx-operator release onto kubeBinary, the version of the
// k8s.io libraries this binary links: emulating an older nginx-operator release changes
// which API versions are served, not the generic server's features.
func kubeVersionFor(kubeBinary *utilversion.Version) basecompatibility.VersionMapping {
	return func(*utilversion.Version) *utilversion.Version { return kubeBinary }
}
