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
	"strings"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

func TestDefaultIsASemanticVersionFromTheFirstReleaseOn(t *testing.T) {
	binary, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	if binary.LessThan(FirstRelease) {
		t.Errorf("default version %s is before the first release %s", binary, FirstRelease)
	}
	info := Get()
	if info.GitVersion != gitVersion || info.Major != "0" || info.Minor != "2" {
		t.Errorf("Get() = %+v, want gitVersion %s, major 0, minor 1", info, gitVersion)
	}
}

func TestStampedVersionIsReported(t *testing.T) {
	stamp(t, "v0.3.1-rc.2")
	info := Get()
	if info.GitVersion != "v0.3.1-rc.2" || info.Major != "0" || info.Minor != "3" {
		t.Errorf("Get() = %+v", info)
	}
	if binary, err := Binary(); err != nil || binary.PreRelease() != "rc.2" {
		t.Errorf("Binary() = %v, %v; want prerelease rc.2", binary, err)
	}
}

func TestAStampThatIsNotSemanticIsAnErrorNamingIt(t *testing.T) {
	stamp(t, "main-branch")
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), `"main-branch"`) {
		t.Errorf("Binary() error = %v, want one naming the bad version", err)
	}
}

func TestEffectiveVersion(t *testing.T) {
	cases := []struct {
		binary, emulated string
		wantInfo         [6]string // major, minor, emulation major/minor, min compatibility major/minor
		wantValid        bool
	}{
		{"v0.1.0", "", [6]string{"0", "1", "0", "1", "0", "1"}, true},
		{"v0.4.2", "", [6]string{"0", "4", "0", "4", "0", "3"}, true},
		{"v0.4.2", "0.2", [6]string{"0", "4", "0", "2", "0", "1"}, true},
		{"v0.4.2", "0.0", [6]string{"0", "4", "0", "0", "0", "1"}, false},
	}
	for _, tc := range cases {
		v := NewEffectiveVersion(utilversion.MustParseSemantic(tc.binary))
		if tc.emulated != "" {
			v.SetEmulationVersion(utilversion.MustParseGeneric(tc.emulated))
		}
		info := v.Info()
		got := [6]string{info.Major, info.Minor, info.EmulationMajor, info.EmulationMinor, info.MinCompatibilityMajor, info.MinCompatibilityMinor}
		if got != tc.wantInfo {
			t.Errorf("%s emulating %q: info versions = %v, want %v", tc.binary, tc.emulated, got, tc.wantInfo)
		}
		if info.GitVersion != tc.binary {
			t.Errorf("%s: gitVersion = %q", tc.binary, info.GitVersion)
		}
		if errs := v.Validate(); (len(errs) == 0) != tc.wantValid {
			t.Errorf("%s emulating %q: Validate() = %v, want valid=%t", tc.binary, tc.emulated, errs, tc.wantValid)
		}
	}
}

func stamp(t *testing.T, v string) {
	old := gitVersion
	gitVersion = v
	t.Cleanup(func() { gitVersion = old })
}
