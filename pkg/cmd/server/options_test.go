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
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/example/nginx-operator/pkg/version"
)

// parse builds options for a binary of release binary from args and completes them.
// Each gets a registry of its own, with a copy of the process-wide Kubernetes feature
// gate: a bad --feature-gates value stays recorded in a gate and would fail later cases.
func parse(t *testing.T, binary *utilversion.Version, args ...string) (*Options, error) {
	t.Helper()
	registry := basecompatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	o := newOptions(io.Discard, registry, binary)
	fs := pflag.NewFlagSet("apiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	return o, o.Complete()
}

func builtVersion(t *testing.T) *utilversion.Version {
	t.Helper()
	v, err := version.Binary()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// completeAndValidate is what the command does before Run.
func completeAndValidate(t *testing.T, args ...string) error {
	t.Helper()
	o, err := parse(t, builtVersion(t), args...)
	if err != nil {
		return err
	}
	return o.Validate()
}

func TestValidateRefusesBadFlagsOfEveryGroup(t *testing.T) {
	const etcd = "--etcd-servers=http://127.0.0.1:2379"
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	cases := []struct {
		name string
		args []string
		want []string // substrings of the error
	}{
		{"no storage at all", nil, []string{"no storage configured", "--etcd-servers", "--data-dir", "embedded"}},
		{"standalone without a data directory", []string{"--standalone"}, []string{"--standalone requires --data-dir"}},
		{"data directory next to an external etcd", []string{etcd, "--data-dir=" + t.TempDir()}, []string{"--data-dir is only used by an embedded etcd or --standalone"}},
		{"etcd: storage backend", []string{etcd, "--storage-backend=etcd2"}, []string{"--storage-backend invalid"}},
		{"etcd: servers overrides", []string{etcd, "--etcd-servers-overrides=nonsense"}, []string{"--etcd-servers-overrides invalid"}},
		{"etcd: reload without encryption config", []string{etcd, "--encryption-provider-config-automatic-reload"}, []string{"--encryption-provider-config-automatic-reload must be set with --encryption-provider-config"}},
		{"etcd: media type with an embedded etcd", []string{"--data-dir=" + t.TempDir(), "--storage-media-type=text/plain"}, []string{"--storage-media-type \"text/plain\" invalid"}},
		{"server run: negative in-flight limit", []string{etcd, "--max-requests-inflight=-1"}, []string{"--max-requests-inflight can not be negative"}},
		{"secure serving: port out of range", []string{etcd, "--secure-port=70000"}, []string{"--secure-port 70000 must be between 1 and 65535"}},
		{"authentication: request header UID without the standard header", []string{etcd, "--requestheader-uid-headers=X-Not-Standard"}, []string{"--requestheader-uid-headers"}},
		{"audit: negative log age", []string{etcd, "--audit-log-path=" + filepath.Join(t.TempDir(), "audit.log"), "--audit-log-maxage=-1"}, []string{"--audit-log-maxage -1 can't be a negative number"}},
		{"audit in standalone mode too", []string{"--standalone", "--data-dir=" + t.TempDir(), "--audit-log-path=" + filepath.Join(t.TempDir(), "audit.log"), "--audit-log-maxage=-1"}, []string{"--audit-log-maxage -1"}},
		{"admission: unknown plugin", []string{etcd, "--enable-admission-plugins=NoSuchPlugin"}, []string{"enable-admission-plugins plugin \"NoSuchPlugin\" is unknown"}},
		{"egress selector: missing file", []string{etcd, "--egress-selector-config-file=" + missing}, []string{"egress-selector-config-file " + missing + " does not exist"}},
		{"tracing: missing file", []string{etcd, "--tracing-config-file=" + missing}, []string{"tracing-config-file " + missing + " does not exist"}},
		{"features: unknown feature gate", []string{etcd, "--feature-gates=NoSuchGate=true"}, []string{"unrecognized feature gate: NoSuchGate"}},
		{"versions: emulating a future release", []string{etcd, "--emulated-version=nginx-operator=0.9"}, []string{"emulation version 0.9 is not between"}},
		{"versions: emulating a release before the first", []string{etcd, "--emulated-version=nginx-operator=0.0"}, []string{"emulation version 0.0 is not between"}},
		{"versions: Kubernetes follows nginx-operator", []string{etcd, "--emulated-version=kube=1.35"}, []string{"EmulationVersion of kube is set by mapping"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := completeAndValidate(t, tc.args...)
			if err == nil {
				t.Fatalf("%v accepted", tc.args)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestValidateAcceptsEachWayToStore(t *testing.T) {
	cases := map[string][]string{
		"external etcd":                  {"--etcd-servers=http://127.0.0.1:2379"},
		"embedded etcd":                  {"--data-dir=" + t.TempDir()},
		"standalone on an embedded etcd": {"--standalone", "--data-dir=" + t.TempDir()},
		"standalone on an external etcd": {"--standalone", "--data-dir=" + t.TempDir(), "--etcd-servers=http://127.0.0.1:2379"},
		"every group set to good values": {"--etcd-servers=http://127.0.0.1:2379", "--secure-port=9443", "--audit-log-path=" + filepath.Join(t.TempDir(), "audit.log"),
			"--audit-log-maxage=3", "--enable-admission-plugins=NamespaceLifecycle", "--emulated-version=nginx-operator=" + version.FirstRelease.String()},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			if err := completeAndValidate(t, args...); err != nil {
				t.Errorf("%v refused: %v", args, err)
			}
		})
	}
}

func TestStandaloneSwitchesOffDelegation(t *testing.T) {
	o, err := parse(t, builtVersion(t), "--standalone", "--data-dir="+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := o.Recommended
	if r.Authentication != nil || r.Authorization != nil || r.CoreAPI != nil || r.Admission != nil || r.Features.EnablePriorityAndFairness {
		t.Errorf("standalone options still delegate: %+v", r)
	}
}

// The resource-wide authorization question is on by default and can be turned off for a
// cluster whose authorization webhook denies particular names.
func TestResourceWideAuthorizationFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--authorization-resource-wide-first=false"}, false},
	} {
		o, err := parse(t, builtVersion(t), append([]string{"--etcd-servers=http://127.0.0.1:2379"}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if o.ResourceWideAuthorization != tc.want {
			t.Errorf("%v: ResourceWideAuthorization = %v, want %v", tc.args, o.ResourceWideAuthorization, tc.want)
		}
	}
}
