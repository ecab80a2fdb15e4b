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

// Command apiserver serves the operator.example.com API as a Kubernetes aggregated API server.
package main

import (
	"os"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/example/nginx-operator/pkg/apiserver"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	opts := apiserver.NewOptions(os.Stdout)
	cmd := &cobra.Command{
		Use:          "apiserver",
		Short:        "Serve the operator.example.com API (nginxoperators) as an aggregated API server",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return opts.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	opts.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}
