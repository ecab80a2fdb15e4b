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

	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// exemptHealthFromInFlightLimit makes the health endpoints bypass
// --max-requests-inflight, the limit that applies when priority and fairness is off
// (standalone mode). That limit serves system:masters past it but refuses everyone
// else with 429, anonymous probes included: under a burst of admin LISTs the kubelet's
// readiness probe would fail and take a busy but healthy server out of its Service.
// With priority and fairness, kube-apiserver's "probes" flow schema exempts them the
// same way.
//
// The library's in-flight filter skips the requests its long-running check accepts, so
// that is where health paths are added. Being long-running also spares them the generic
// request timeout; their checks (etcd's included) carry their own timeouts.
func exemptHealthFromInFlightLimit(longRunning apirequest.LongRunningRequestCheck) apirequest.LongRunningRequestCheck {
	return func(r *http.Request, requestInfo *apirequest.RequestInfo) bool {
		if !requestInfo.IsResourceRequest && isHealthPath(r.URL.Path) {
			return true
		}
		return longRunning(r, requestInfo)
	}
}
