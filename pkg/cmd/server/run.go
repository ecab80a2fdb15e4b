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
	"context"
	"fmt"
	"os"

	"k8s.io/klog/v2"

	"github.com/example/nginx-operator/pkg/embeddedetcd"
)

// Run starts the embedded etcd if one was asked for, then serves until ctx is done.
// The options must be completed and valid.
func (o *Options) Run(ctx context.Context) error {
	if o.DataDir != "" {
		if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
			return fmt.Errorf("creating --data-dir: %w", err)
		}
	}
	if o.usesEmbeddedEtcd() {
		etcd, err := embeddedetcd.Start(o.DataDir)
		if err != nil {
			return err
		}
		// Deferred so etcd outlives the server's graceful shutdown.
		defer etcd.Close()
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{etcd.ClientURL}
		klog.InfoS("Started embedded etcd; its data is local to this process, so run a single replica only", "dataDir", o.DataDir, "url", etcd.ClientURL)
	}

	config, err := o.Config()
	if err != nil {
		return err
	}
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}
