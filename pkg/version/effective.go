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

package version

import (
	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	basecompatibility "k8s.io/component-base/compatibility"
)

// ComponentName names nginx-operator in a ComponentGlobalsRegistry, and so in
// --emulated-version=nginx-operator=0.1.
const ComponentName = "nginx-operator"

// FirstRelease is the oldest release a binary can emulate: there is nothing before it.
var FirstRelease = utilversion.MajorMinor(0, 1)

// NewEffectiveVersion returns the effective version of a binary of release binary
// (normally Binary()). It emulates its own release unless told otherwise, down to
// FirstRelease, and is compatible with the release before it (not before FirstRelease).
// Its Info, served at /version, describes this project's build, not the k8s.io
// libraries'.
func NewEffectiveVersion(binary *utilversion.Version) basecompatibility.MutableEffectiveVersion {
	v := basecompatibility.NewEffectiveVersion(binary, false, FirstRelease, FirstRelease)
	// Sets the minimum compatibility version again, one release back but not before
	// FirstRelease; the constructor does not apply the floor.
	v.SetEmulationVersion(binary)
	return effectiveVersion{v}
}

type effectiveVersion struct {
	basecompatibility.MutableEffectiveVersion
}

// Info reports the binary, emulation and minimum compatibility versions with this
// project's build details; the generic implementation takes those from
// k8s.io/component-base and leaves a major version of 0 empty.
func (v effectiveVersion) Info() *apimachineryversion.Info {
	info := v.MutableEffectiveVersion.Info()
	if info == nil {
		return nil
	}
	setMajorMinor(&info.Major, &info.Minor, v.BinaryVersion())
	setMajorMinor(&info.EmulationMajor, &info.EmulationMinor, v.EmulationVersion())
	setMajorMinor(&info.MinCompatibilityMajor, &info.MinCompatibilityMinor, v.MinCompatibilityVersion())
	build := Get()
	info.GitVersion = "v" + v.BinaryVersion().String()
	info.GitCommit = build.GitCommit
	info.GitTreeState = build.GitTreeState
	info.BuildDate = build.BuildDate
	return info
}

func setMajorMinor(major, minor *string, v *utilversion.Version) {
	if v != nil {
		*major, *minor = itoa(v.Major()), itoa(v.Minor())
	}
}
