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

// Package embeddedetcd runs a single-member etcd inside the apiserver process. It is a
// convenience for local runs and tests: its data is local to one process, so it must
// never back more than one apiserver replica.
package embeddedetcd

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Etcd is a running single-member etcd. Its data lives under the data directory and
// survives restarts.
type Etcd struct {
	etcd *embed.Etcd
	// ClientURL is the loopback URL the storage layer connects to.
	ClientURL string
}

// Start starts etcd in dataDir/etcd, listening on free loopback ports, and waits until
// it is ready. Its log goes to dataDir/etcd.log.
func Start(dataDir string) (*Etcd, error) {
	dir := filepath.Join(dataDir, "etcd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating etcd data directory: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = "nginx-operator"
	cfg.Dir = dir
	// Port 0 picks a free port; nothing outside this process talks to this etcd. The
	// advertised peer URL stays fixed so the single-member cluster identity is stable.
	loopback := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls = []url.URL{loopback}
	cfg.AdvertiseClientUrls = []url.URL{loopback}
	cfg.ListenPeerUrls = []url.URL{loopback}
	cfg.AdvertisePeerUrls = []url.URL{{Scheme: "http", Host: "127.0.0.1:2380"}}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{filepath.Join(dataDir, "etcd.log")}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after a minute; see %s", cfg.LogOutputs[0])
	}
	return &Etcd{etcd: e, ClientURL: "http://" + e.Clients[0].Addr().String()}, nil
}

// Close stops etcd and waits until its data is flushed.
func (e *Etcd) Close() {
	e.etcd.Close()
}
