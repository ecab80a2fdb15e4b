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

package controller

import (
	"errors"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// LimitRequests sets the controller's client-side limit on requests per second. With
// qps 0 there is none, as controller-runtime's own config defaults to: the API servers'
// Priority and Fairness queue and shed load server-side, and a client-side bucket only
// makes the controller fall behind a cluster that has room. With qps above 0 every
// client made from cfg shares one bucket, so the limit holds for the process; otherwise
// client-go would give each API type a bucket of its own. burst 0 means twice qps.
func LimitRequests(cfg *rest.Config, qps float64, burst int) error {
	switch {
	case qps < 0:
		return errors.New("--kube-api-qps must not be negative")
	case burst < 0:
		return errors.New("--kube-api-burst must not be negative")
	case qps == 0:
		cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, -1, nil
		return nil
	}
	if burst == 0 {
		burst = max(1, int(2*qps))
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(float32(qps), burst)
	return nil
}
