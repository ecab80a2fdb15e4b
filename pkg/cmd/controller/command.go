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
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// NewCommand returns the controller command: parse flags, Validate, then run the manager
// until ctx ends.
func NewCommand(ctx context.Context, o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:          "controller",
		Short:        "Reconcile every NginxOperator into an nginx Deployment and Service, and report their status",
		Long:         "The nginx-operator controller reconciles every NginxOperator into an nginx Deployment and Service, and reports their status, conditions, events and metrics.",
		SilenceUsage: true,
		// main prints the error once.
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.SetContext(ctx)
	fss := o.flagSets(flag.CommandLine.Lookup("kubeconfig"))
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cliflag.SetUsageAndHelpFunc(cmd, fss, 0)
	return cmd
}

// Run starts the manager and blocks until ctx ends or the manager fails.
func (o *Options) Run(ctx context.Context) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))
	cfg, err := ctrl.GetConfig() // honours --kubeconfig and KUBECONFIG
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	if err := LimitRequests(cfg, o.QPS, o.Burst); err != nil {
		return err
	}
	mgr, err := NewManager(cfg, o)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	return mgr.Start(ctx)
}
