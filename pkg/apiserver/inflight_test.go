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
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
)

func TestExemptHealthFromInFlightLimit(t *testing.T) {
	check := exemptHealthFromInFlightLimit(genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch"), sets.NewString()))
	resolver := &apirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	cases := []struct {
		path   string
		exempt bool
	}{
		{"/readyz", true},
		{"/readyz?verbose", true},
		{"/livez/etcd", true},
		{"/healthz", true},
		{"/apis/operator.example.com/v1alpha2/namespaces/default/nginxoperators", false},
		{"/apis/operator.example.com/v1alpha2/namespaces/default/nginxoperators?watch=true", true},
		{"/metrics", false},
		{"/healthzz", false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		info, err := resolver.NewRequestInfo(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := check(r, info); got != tc.exempt {
			t.Errorf("%s: exempt from the in-flight limit = %v, want %v", tc.path, got, tc.exempt)
		}
	}
}
