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

// Command etcd-snapshot saves a snapshot of nginx-operator's etcd into a directory and
// deletes the oldest beyond --keep: the backup CronJob of
// artifacts/overlays/components/etcd-backup runs it. A snapshot is restored with
// hack/etcd-restore.sh (docs/operations.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.uber.org/zap"

	"github.com/example/nginx-operator/pkg/etcdsnapshot"
)

func main() {
	var (
		endpoints string
		tlsInfo   transport.TLSInfo
		opts      etcdsnapshot.Options
	)
	flag.StringVar(&endpoints, "endpoints", "", "Comma-separated client URLs of the etcd members; the snapshot comes from the first that answers.")
	flag.StringVar(&tlsInfo.TrustedCAFile, "cacert", "", "CA certificate that signed the members' serving certificates.")
	flag.StringVar(&tlsInfo.CertFile, "cert", "", "Client certificate of the etcd CA.")
	flag.StringVar(&tlsInfo.KeyFile, "key", "", "Key of the client certificate.")
	flag.StringVar(&opts.Dir, "dir", "/var/lib/etcd-backups", "Directory the snapshots are saved in.")
	flag.IntVar(&opts.Keep, "keep", 7, "Snapshots to keep, the newest; older ones in --dir are deleted after a successful snapshot.")
	flag.DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "Time limit of the attempt at each member.")
	flag.Parse()
	if endpoints == "" {
		fmt.Fprintln(os.Stderr, "--endpoints is required")
		os.Exit(2)
	}
	opts.Endpoints = strings.Split(endpoints, ",")
	if tlsInfo.CertFile != "" || tlsInfo.TrustedCAFile != "" {
		cfg, err := tlsInfo.ClientConfig()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		opts.TLS = cfg
	}
	logger, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts.Logger = logger
	res, err := etcdsnapshot.Save(context.Background(), opts)
	for _, name := range res.Deleted {
		logger.Info("deleted an old snapshot", zap.String("name", name))
	}
	if err != nil {
		logger.Error("snapshot failed", zap.Error(err))
		os.Exit(1)
	}
	logger.Info("snapshot saved", zap.String("path", res.Path), zap.String("endpoint", res.Endpoint),
		zap.Int64("revision", res.Revision), zap.String("etcdVersion", res.EtcdVersion), zap.Int64("bytes", res.Size))
}
