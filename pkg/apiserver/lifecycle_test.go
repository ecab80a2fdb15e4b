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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	restclient "k8s.io/client-go/rest"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/embeddedetcd"
	"github.com/example/nginx-operator/pkg/version"
)

const v1alpha1Warning = `299 - "operator.example.com/v1alpha1 NginxOperator is deprecated in nginx-operator v0.1+, unavailable in v0.4+; use operator.example.com/v1alpha2 NginxOperator"`

// TestV1alpha1FollowsNginxOperatorReleases builds the real server at several
// nginx-operator versions. Nothing here depends on the version of the k8s.io
// libraries: the server's effective version is nginx-operator's alone.
func TestV1alpha1FollowsNginxOperatorReleases(t *testing.T) {
	etcd, err := embeddedetcd.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()

	atRelease := func(binary, emulated string) basecompatibility.EffectiveVersion {
		v := version.NewEffectiveVersion(utilversion.MustParseSemantic(binary))
		if emulated != "" {
			v.SetEmulationVersion(utilversion.MustParseGeneric(emulated))
		}
		if errs := v.Validate(); len(errs) != 0 {
			t.Fatalf("effective version %s emulating %q: %v", binary, emulated, errs)
		}
		return v
	}
	built, err := version.Binary()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name           string
		version        basecompatibility.EffectiveVersion
		servesV1alpha1 bool
	}{
		{"this build", version.NewEffectiveVersion(built), true},
		{"the release that deprecated it", atRelease("v0.1.0", ""), true},
		{"the last release before its removal", atRelease("v0.3.2", ""), true},
		{"the release that removes it", atRelease("v0.4.0", ""), false},
		{"a later release", atRelease("v1.2.0", ""), false},
		{"the removing release emulating the one before", atRelease("v0.4.0", "0.3"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			handler := newTestServer(t, etcd.ClientURL, tc.version)

			var group metav1.APIGroup
			getJSON(t, handler, "/apis/operator.example.com", &group)
			discovered := map[string]bool{}
			for _, v := range group.Versions {
				discovered[v.Version] = true
			}
			if !discovered["v1alpha2"] || group.PreferredVersion.Version != "v1alpha2" {
				t.Errorf("discovery = %+v, want v1alpha2 served and preferred", group)
			}
			if discovered["v1alpha1"] != tc.servesV1alpha1 {
				t.Errorf("v1alpha1 in discovery = %t, want %t", discovered["v1alpha1"], tc.servesV1alpha1)
			}

			v1 := get(handler, "/apis/operator.example.com/v1alpha1/namespaces/default/nginxoperators")
			if !tc.servesV1alpha1 {
				if v1.Code != http.StatusNotFound {
					t.Errorf("GET v1alpha1: %d, want 404", v1.Code)
				}
			} else {
				if v1.Code != http.StatusOK {
					t.Fatalf("GET v1alpha1: %d %s", v1.Code, v1.Body)
				}
				if got := v1.Header().Values("Warning"); len(got) != 1 || got[0] != v1alpha1Warning {
					t.Errorf("v1alpha1 Warning = %q, want [%s]", got, v1alpha1Warning)
				}
			}
			v2 := get(handler, "/apis/operator.example.com/v1alpha2/namespaces/default/nginxoperators")
			if v2.Code != http.StatusOK || len(v2.Header().Values("Warning")) != 0 {
				t.Errorf("GET v1alpha2: %d, Warning %q; want 200 without a warning", v2.Code, v2.Header().Values("Warning"))
			}
		})
	}
}

// newTestServer builds the server on etcdURL with nothing in front of it: no
// authentication, no authorization. Its storage is closed when the test ends.
func newTestServer(t *testing.T, etcdURL string, effective basecompatibility.EffectiveVersion) http.Handler {
	t.Helper()
	config := NewRecommendedConfig()
	config.EffectiveVersion = effective
	config.ExternalAddress = "127.0.0.1:443"
	config.LoopbackClientConfig = &restclient.Config{Host: "https://" + config.ExternalAddress}
	etcd := genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry/"+t.Name(), Codecs.LegacyCodec(v1alpha2.SchemeGroupVersion)))
	etcd.StorageConfig.Transport.ServerList = []string{etcdURL}
	// Straight to etcd: a watch cache answers 429 until it has synced.
	etcd.EnableWatchCache = false
	if err := etcd.ApplyTo(&config.Config); err != nil {
		t.Fatal(err)
	}
	server, err := (&Config{GenericConfig: config}).Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.GenericAPIServer.Destroy)
	return server.GenericAPIServer.Handler
}

func get(handler http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func getJSON(t *testing.T, handler http.Handler, path string, into any) {
	t.Helper()
	rec := get(handler, path)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
