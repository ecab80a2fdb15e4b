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

// Package version is the release of nginx-operator a binary was built from. It is
// this project's own version, not the version of the k8s.io libraries it links:
// API lifecycles (when v1alpha1 is deprecated and removed) are expressed in it.
//
// Release builds stamp it with the linker:
//
//	go build -ldflags "-X github.com/example/nginx-operator/pkg/version.gitVersion=v0.2.0 \
//	  -X github.com/example/nginx-operator/pkg/version.gitCommit=$(git rev-parse HEAD) \
//	  -X github.com/example/nginx-operator/pkg/version.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// Set by -ldflags -X. The defaults describe an unstamped build of the current release line.
var (
	// gitVersion is a semantic version with a leading "v", e.g. v0.1.0 or v0.2.0-rc.1.
	gitVersion = "v0.2.0"
	// gitCommit defaults to the revision Go's build stamping recorded, if any.
	gitCommit = ""
	// gitTreeState is "clean" or "dirty"; defaults to what Go's build stamping recorded.
	gitTreeState = ""
	// buildDate is in ISO 8601 format, e.g. 2026-01-02T15:04:05Z.
	buildDate = ""
)

// Get returns the version of this binary.
func Get() apimachineryversion.Info {
	info := apimachineryversion.Info{
		GitVersion:   gitVersion,
		GitCommit:    gitCommit,
		GitTreeState: gitTreeState,
		BuildDate:    buildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
	if binary, err := Binary(); err == nil {
		info.Major, info.Minor = itoa(binary.Major()), itoa(binary.Minor())
	}
	if info.GitCommit == "" || info.GitTreeState == "" {
		revision, modified := vcsStamp()
		if info.GitCommit == "" {
			info.GitCommit = revision
		}
		if info.GitTreeState == "" && revision != "" {
			info.GitTreeState = map[bool]string{true: "dirty", false: "clean"}[modified]
		}
	}
	return info
}

// Binary returns the version of this binary, parsed. It fails for a build stamped
// with a version that is not semantic, which the binaries refuse to run.
func Binary() (*utilversion.Version, error) {
	v, err := utilversion.ParseSemantic(gitVersion)
	if err != nil {
		return nil, fmt.Errorf("this binary was built with version %q, which is not a semantic version like v0.1.0 (see -ldflags -X .../pkg/version.gitVersion): %w", gitVersion, err)
	}
	return v, nil
}

// itoa spells 0 as "0"; k8s.io/apimachinery's version.Itoa leaves it empty, which
// suits Kubernetes (major 1) but not a project at major version 0.
func itoa(i uint) string { return strconv.FormatUint(uint64(i), 10) }

// vcsStamp reads the revision that "go build" records when it runs in a git checkout.
func vcsStamp() (revision string, modified bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return revision, modified
}
