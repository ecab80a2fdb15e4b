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
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/generated/clientset/versioned/scheme"
)

func newRenderedCommand(c *clients, streams genericiooptions.IOStreams) *cobra.Command {
	printFlags := genericclioptions.NewPrintFlags("").WithTypeSetter(scheme.Scheme)
	cmd := &cobra.Command{
		Use:   "rendered NAME",
		Short: "Show the files nginx finds in the pods of an NginxOperator, without kubectl exec",
		Long: "rendered prints every file the nginx container of the NginxOperator's pods mounts, as its\n" +
			"Deployment says: nginx.conf, the inline configuration, the files of ConfigMaps you may get.\n" +
			"A ConfigMap you may not get, a Secret and the image's own files are named, not shown.",
		Example: "  kubectl nginx rendered web\n" +
			"  kubectl nginx rendered web -o yaml",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, namespace, err := c.operator()
			if err != nil {
				return err
			}
			view, err := api.NginxOperators(namespace).GetRendered(cmd.Context(), args[0], metav1.GetOptions{})
			if err != nil {
				return err
			}
			if printed, err := printWith(printFlags, view, streams.Out); printed {
				return err
			}
			return writeRendered(streams.Out, view)
		},
	}
	printFlags.AddFlags(cmd)
	return cmd
}

// writeRendered prints each file under a header naming its path and source.
func writeRendered(out io.Writer, view *v1alpha2.NginxOperatorRendered) error {
	l := lines{w: out}
	if view.Message != "" {
		l.printf("# %s\n", view.Message)
		return l.err
	}
	l.printf("# Deployment %s, generation %d\n", view.Deployment, view.Generation)
	for _, f := range view.Files {
		l.printf("\n# %s (%s)\n", f.Path, f.Source)
		switch {
		case f.Withheld != "":
			l.printf("# not shown: %s\n", f.Withheld)
		case strings.HasSuffix(f.Content, "\n"):
			l.printf("%s", f.Content)
		default:
			l.printf("%s\n", f.Content)
		}
	}
	return l.err
}
