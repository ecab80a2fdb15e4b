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

package embeddedetcd

import (
	"net"
	"testing"
)

// The embedded etcd has no TLS and no authentication: only loopback listeners keep other
// hosts and pods away from it.
func TestListensOnLoopbackOnly(t *testing.T) {
	e, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var listeners []net.Listener
	listeners = append(listeners, e.etcd.Clients...)
	for _, p := range e.etcd.Peers {
		listeners = append(listeners, p.Listener)
	}
	if len(e.etcd.Clients) == 0 || len(e.etcd.Peers) == 0 {
		t.Fatalf("%d client and %d peer listeners, want at least one of each", len(e.etcd.Clients), len(e.etcd.Peers))
	}
	for _, l := range listeners {
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok || !addr.IP.IsLoopback() {
			t.Errorf("etcd listens on %s, not on loopback", l.Addr())
		}
		t.Logf("embedded etcd listens on %s", l.Addr())
	}
	cfg := e.etcd.Config()
	if len(cfg.ListenMetricsUrls) != 0 {
		t.Errorf("embedded etcd serves metrics on %v", cfg.ListenMetricsUrls)
	}
	for _, u := range append(cfg.AdvertiseClientUrls, cfg.AdvertisePeerUrls...) {
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			t.Errorf("embedded etcd advertises %s, not a loopback address", u.String())
		}
	}
}
