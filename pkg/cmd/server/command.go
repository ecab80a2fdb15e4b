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

	"github.com/spf13/cobra"

	"github.com/example/nginx-operator/pkg/version"
)

// NewCommand returns the apiserver command: parse flags, then Complete, Validate and Run.
func NewCommand(ctx context.Context, o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:          "apiserver",
		Short:        "Serve the operator.example.com API (nginxoperators) as an aggregated API server",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.PrintVersion {
				info := version.Get()
				_, err := fmt.Fprintf(o.Out, "%s %s (commit %s, %s)\n", version.ComponentName, info.GitVersion, orUnknown(info.GitCommit), info.GoVersion)
				return err
			}
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
