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
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

func TestLimitRequestsZeroLeavesLimitingToTheServer(t *testing.T) {
	cfg := &rest.Config{QPS: 50, Burst: 100}
	if err := LimitRequests(cfg, 0, 0); err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimiter != nil || cfg.QPS >= 0 {
		t.Fatalf("qps 0 should disable client-side limiting, got QPS %v, limiter %v", cfg.QPS, cfg.RateLimiter)
	}
	// client-go makes no bucket for a negative QPS: the client really is unlimited.
	c, err := rest.RESTClientFor(withCodec(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if c.GetRateLimiter() != nil {
		t.Fatalf("client has a rate limiter: %v", c.GetRateLimiter())
	}
}

func TestLimitRequestsSharesOneBucket(t *testing.T) {
	cfg := &rest.Config{}
	if err := LimitRequests(cfg, 10, 0); err != nil {
		t.Fatal(err)
	}
	a, err := rest.RESTClientFor(withCodec(rest.CopyConfig(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := rest.RESTClientFor(withCodec(rest.CopyConfig(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	if a.GetRateLimiter() == nil || a.GetRateLimiter() != b.GetRateLimiter() {
		t.Fatalf("two clients of one config should share one limiter, got %p and %p", a.GetRateLimiter(), b.GetRateLimiter())
	}
	if got := a.GetRateLimiter().QPS(); got != 10 {
		t.Fatalf("QPS %v, want 10", got)
	}
	// Burst defaults to twice the QPS: 20 requests pass at once, the 21st waits.
	for i := range 20 {
		if !a.GetRateLimiter().TryAccept() {
			t.Fatalf("request %d of the burst was refused", i+1)
		}
	}
	if b.GetRateLimiter().TryAccept() {
		t.Fatal("the 21st request passed the shared bucket")
	}
}

func TestLimitRequestsRefusesNegatives(t *testing.T) {
	for _, tc := range []struct {
		qps   float64
		burst int
	}{{-1, 0}, {5, -1}} {
		if err := LimitRequests(&rest.Config{}, tc.qps, tc.burst); err == nil {
			t.Errorf("qps %v burst %d: no error", tc.qps, tc.burst)
		}
	}
}

// withCodec completes a config enough for rest.RESTClientFor.
func withCodec(cfg *rest.Config) *rest.Config {
	cfg.Host = "https://127.0.0.1:1"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return cfg
}
