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

// Package etcdsnapshot saves snapshots of nginx-operator's etcd into a directory and keeps
// the newest of them: what the backup CronJob runs (cmd/etcd-snapshot).
package etcdsnapshot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/snapshot"
	"go.uber.org/zap"
)

// Options say where to take a snapshot from and where to keep it.
type Options struct {
	// Endpoints are the members' client URLs; the snapshot comes from the first that answers.
	Endpoints []string
	TLS       *tls.Config
	// Dir receives the snapshots; Keep of them, the newest, stay.
	Dir  string
	Keep int
	// Timeout bounds each member's attempt; ConnectTimeout (default 10s) its first request,
	// so that a member that is down costs that, not the whole Timeout.
	Timeout        time.Duration
	ConnectTimeout time.Duration
	Logger         *zap.Logger
	Now            func() time.Time
}

// Result describes a saved snapshot.
type Result struct {
	Path     string
	Endpoint string
	// Revision is the member's revision just before the snapshot: the snapshot holds every
	// write up to it, at least.
	Revision    int64
	EtcdVersion string
	Size        int64
	Deleted     []string
}

// Save takes a snapshot and then deletes the snapshots beyond the newest o.Keep. The file
// appears under its final name only once it is complete, checked against its checksum and
// synced, so a crash never leaves a truncated snapshot that looks whole.
func Save(ctx context.Context, o Options) (Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return Result{}, err
	}
	path := filepath.Join(o.Dir, Name(o.Now()))
	var errs []error
	for _, endpoint := range o.Endpoints {
		res, err := saveFrom(ctx, o, endpoint, path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", endpoint, err))
			continue
		}
		res.Deleted, err = prune(o.Dir, o.Keep, filepath.Base(path))
		return res, err
	}
	return Result{}, fmt.Errorf("no member gave a snapshot: %w", errors.Join(errs...))
}

func saveFrom(ctx context.Context, o Options, endpoint, path string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cfg := clientv3.Config{Endpoints: []string{endpoint}, TLS: o.TLS, DialTimeout: o.ConnectTimeout, Context: ctx, Logger: o.Logger}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return Result{}, err
	}
	statusCtx, cancelStatus := context.WithTimeout(ctx, o.ConnectTimeout)
	status, err := cli.Status(statusCtx, endpoint)
	cancelStatus()
	_ = cli.Close() // used for one Status call: closing it loses nothing
	if err != nil {
		return Result{}, err
	}
	version, err := snapshot.SaveWithVersion(ctx, o.Logger, cfg, path)
	if err != nil {
		return Result{}, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return Result{}, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return Result{}, err
	}
	return Result{Path: path, Endpoint: endpoint, Revision: status.Header.Revision, EtcdVersion: version, Size: info.Size()}, nil
}

// prune deletes the snapshots in dir beyond the newest keep, never the one just written
// (which a clock set back could make look older than the others).
func prune(dir string, keep int, written string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	var deleted []string
	for _, name := range Expired(names, keep) {
		if name == written {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return deleted, err
		}
		deleted = append(deleted, name)
	}
	return deleted, syncDir(dir)
}

// syncDir makes a rename or a removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }() // opened to sync, which says whether that worked
	return d.Sync()
}
