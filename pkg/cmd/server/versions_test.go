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
	"strings"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/example/nginx-operator/pkg/apiserver"
	"github.com/example/nginx-operator/pkg/features"
	"github.com/example/nginx-operator/pkg/version"
)

func TestEmulatedVersionIsNginxOperatorsAndDrivesTheServer(t *testing.T) {
	binary := utilversion.MustParseSemantic("v0.4.0")
	o, err := parse(t, binary, "--etcd-servers=http://127.0.0.1:2379", "--emulated-version=nginx-operator=0.3")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ours := o.ComponentGlobalsRegistry.EffectiveVersionFor(version.ComponentName)
	if got := ours.EmulationVersion(); !got.EqualTo(utilversion.MajorMinor(0, 3)) {
		t.Errorf("nginx-operator emulates %s, want 0.3", got)
	}
	kube := o.ComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent)
	if !kube.EmulationVersion().EqualTo(kube.BinaryVersion().WithPatch(0)) {
		t.Errorf("kube emulates %s, want its own binary version %s whatever nginx-operator emulates", kube.EmulationVersion(), kube.BinaryVersion())
	}

	// The server's effective version, which decides what is served, is nginx-operator's.
	config := genericapiserver.NewConfig(apiserver.Codecs)
	if err := o.ServerRun.ApplyTo(config); err != nil {
		t.Fatal(err)
	}
	if got := config.EffectiveVersion.EmulationVersion(); !got.EqualTo(utilversion.MajorMinor(0, 3)) {
		t.Errorf("server emulation version = %s, want nginx-operator's 0.3", got)
	}
	if got := config.EffectiveVersion.Info().GitVersion; got != "v0.4.0" {
		t.Errorf("/version gitVersion = %q, want v0.4.0", got)
	}
}

func TestKubeVersionIsTheLibrariesWhateverNginxOperatorEmulates(t *testing.T) {
	libraries := utilversion.MajorMinor(1, 37)
	for _, v := range []string{"0.1", "0.3", "1.40"} {
		if got := kubeVersionFor(libraries)(utilversion.MustParseGeneric(v)); !got.EqualTo(libraries) {
			t.Errorf("nginx-operator %s maps to kube %s, want %s", v, got, libraries)
		}
	}
}

func TestRegisteringTwiceKeepsTheFirstRegistration(t *testing.T) {
	registry := basecompatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	registerComponents(registry, utilversion.MustParseSemantic("v0.2.0"))
	// A second call would fail on the existing version mapping if it tried again.
	registerComponents(registry, utilversion.MustParseSemantic("v0.3.0"))
	if got := registry.EffectiveVersionFor(version.ComponentName).BinaryVersion(); !got.EqualTo(utilversion.MustParseSemantic("v0.2.0")) {
		t.Errorf("binary version = %s, want the first registration's 0.2.0", got)
	}
}

// A release's new fields are off while the server emulates the release before it (the
// upgrade window), on at its own release, and can be turned off by their gate, but not
// on while emulating a release that lacks them.
func TestEmulatedVersionDecidesNginxOperatorsFeatureGates(t *testing.T) {
	binary := utilversion.MustParseSemantic("v0.2.0")
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--emulated-version=nginx-operator=0.1"}, false},
		{[]string{"--feature-gates=nginx-operator:ContentUpdate=false"}, false},
	} {
		o, err := parse(t, binary, append([]string{"--etcd-servers=http://127.0.0.1:2379"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		// What Config hands the storage.
		if got := o.ComponentGlobalsRegistry.FeatureGateFor(version.ComponentName).Enabled(features.ContentUpdate); got != tc.want {
			t.Errorf("%v: ContentUpdate enabled = %t, want %t", tc.args, got, tc.want)
		}
	}
	args := []string{"--etcd-servers=http://127.0.0.1:2379", "--emulated-version=nginx-operator=0.1", "--feature-gates=nginx-operator:ContentUpdate=true"}
	if _, err := parse(t, binary, args...); err == nil || !strings.Contains(err.Error(), "PreAlpha at emulated version 0.1") {
		t.Errorf("%v: error %v, want the gate refused before its release", args, err)
	}
}
