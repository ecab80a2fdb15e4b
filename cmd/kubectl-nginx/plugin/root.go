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

// Package plugin is the kubectl plugin "kubectl nginx": the history of an
// NginxOperator's content, the difference between two revisions, rollback to one, and
// the files its pods load, with kubectl's own flags (-n, --context, --kubeconfig, -o).
package plugin

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	v1alpha2client "github.com/example/nginx-operator/pkg/generated/clientset/versioned/typed/operator/v1alpha2"
)

// NewCommand is "kubectl nginx" with its subcommands.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	cmd := &cobra.Command{
		Use: "kubectl-nginx",
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl nginx",
		},
		Short: "Revisions, rollback and the rendered configuration of NginxOperators",
		Long: "kubectl nginx reads the revisions an NginxOperator's content went through (every change of\n" +
			"spec.config, spec.files and spec.tls is one), sets the content back to one of them, and shows\n" +
			"the files its pods load.",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	flags.AddFlags(cmd.PersistentFlags())
	c := &clients{flags: flags}
	cmd.AddCommand(newHistoryCommand(c, streams), newDiffCommand(c, streams), newRollbackCommand(c, streams), newRenderedCommand(c, streams),
		newDecisionCommand(c, streams, "promote", "Send a staged configuration to every pod without waiting for the canary analysis", "promoted"),
		newDecisionCommand(c, streams, "abort", "Take a staged configuration back from the canary pods; it is not tried again until spec.config changes", "aborted"))
	return cmd
}

// clients builds the API clients from kubectl's flags when a command runs.
type clients struct {
	flags *genericclioptions.ConfigFlags
}

func (c *clients) operator() (v1alpha2client.OperatorV1alpha2Interface, string, error) {
	config, err := c.flags.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	namespace, _, err := c.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	cs, err := versioned.NewForConfig(config)
	if err != nil {
		return nil, "", fmt.Errorf("building the client: %w", err)
	}
	return cs.OperatorV1alpha2(), namespace, nil
}

// printWith prints obj with -o's printer and reports true, or reports false when -o was
// not given and the command prints its own text.
func printWith(printFlags *genericclioptions.PrintFlags, obj runtime.Object, out io.Writer) (bool, error) {
	if printFlags.OutputFormat == nil || *printFlags.OutputFormat == "" {
		return false, nil
	}
	printer, err := printFlags.ToPrinter()
	if err != nil {
		return true, err
	}
	return true, printer.PrintObj(obj, out)
}

// lines writes formatted text and keeps the first write error, for output of many lines.
type lines struct {
	w   io.Writer
	err error
}

func (l *lines) printf(format string, args ...any) {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.w, format, args...)
	}
}
