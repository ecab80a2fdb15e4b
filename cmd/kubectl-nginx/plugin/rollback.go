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

package plugin

import (
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func newRollbackCommand(c *clients, streams genericiooptions.IOStreams) *cobra.Command {
	var toRevision int64
	var dryRun string
	cmd := &cobra.Command{
		Use:   "rollback NAME [--to-revision=N]",
		Short: "Set the content of an NginxOperator back to a kept revision (by default the one before the newest)",
		Long: "rollback sets spec.config, spec.files and spec.tls back to those of a kept revision, as\n" +
			"\"kubectl rollout undo\" sets a Deployment's template back; the result is a new revision.\n" +
			"It needs create on nginxoperators/rollback and update on the NginxOperator, and whatever\n" +
			"the revision's content needs (a Secret in spec.tls: get on it).",
		Example: "  kubectl nginx rollback web\n" +
			"  kubectl nginx rollback web --to-revision=2 --dry-run=server",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, namespace, err := c.operator()
			if err != nil {
				return err
			}
			opts := metav1.CreateOptions{FieldManager: "kubectl-nginx"}
			switch dryRun {
			case "none", "":
			case "server":
				opts.DryRun = []string{metav1.DryRunAll}
			default:
				return fmt.Errorf(`--dry-run must be "none" or "server", not %q`, dryRun)
			}
			got, err := api.NginxOperators(namespace).Rollback(cmd.Context(), args[0], &v1alpha2.NginxOperatorRollback{ToRevision: toRevision}, opts)
			if err != nil {
				return err
			}
			target := "the revision before the newest"
			if toRevision > 0 {
				target = fmt.Sprintf("revision %d", toRevision)
			}
			suffix := fmt.Sprintf(": now revision %d", got.Status.Revision)
			if len(opts.DryRun) > 0 {
				suffix = " (server dry run)"
			}
			_, err = fmt.Fprintf(streams.Out, "nginxoperator.operator.example.com/%s rolled back to %s%s\n", got.Name, target, suffix)
			return err
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to go back to; 0 means the one before the newest.")
	cmd.Flags().StringVar(&dryRun, "dry-run", "none", `"server" sends the rollback without storing its result.`)
	return cmd
}
