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
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func newDiffCommand(c *clients, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "diff NAME REVISION [REVISION]",
		Short: "Show how the content of two revisions differs (the second defaults to the newest)",
		Example: "  kubectl nginx diff web 1\n" +
			"  kubectl nginx diff web 2 4",
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, namespace, err := c.operator()
			if err != nil {
				return err
			}
			name := args[0]
			numbers := make([]int64, 0, 2)
			for _, arg := range args[1:] {
				n, err := strconv.ParseInt(arg, 10, 64)
				if err != nil || n < 1 {
					return fmt.Errorf("%q is not a revision number (1, 2, ...)", arg)
				}
				numbers = append(numbers, n)
			}
			if len(numbers) == 1 {
				no, err := api.NginxOperators(namespace).Get(cmd.Context(), name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				numbers = append(numbers, no.Status.Revision)
			}
			var revisions [2]*v1alpha2.NginxOperatorRevision
			for i, n := range numbers {
				revisions[i], err = api.NginxOperatorRevisions(namespace).Get(cmd.Context(), fmt.Sprintf("%s-%d", name, n), metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("revision %d of %s: %w", n, name, err)
				}
			}
			text, err := diffContent(revisions[0], revisions[1])
			if err != nil {
				return err
			}
			if text == "" {
				_, err := fmt.Fprintf(streams.Out, "revisions %d and %d of %s have the same content\n", numbers[0], numbers[1], name)
				return err
			}
			_, err = fmt.Fprint(streams.Out, text)
			return err
		},
	}
}

// diffContent is a unified diff of two revisions' content as renderContent writes it.
func diffContent(a, b *v1alpha2.NginxOperatorRevision) (string, error) {
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(renderContent(&a.Content)),
		B:        difflib.SplitLines(renderContent(&b.Content)),
		FromFile: a.Name,
		ToFile:   b.Name,
		Context:  3,
	})
}

// renderContent writes a revision's content as lines to compare: the inline nginx.conf
// itself, and the ConfigMaps and Secrets by name (a revision holds no data of theirs).
func renderContent(c *v1alpha2.RevisionContent) string {
	var b strings.Builder
	switch {
	case c.Config == nil:
		b.WriteString("# spec.config: none (the image's own nginx.conf)\n")
	case c.Config.ConfigMapKeyRef != nil:
		fmt.Fprintf(&b, "# spec.config: key %s of ConfigMap %s\n", c.Config.ConfigMapKeyRef.Key, c.Config.ConfigMapKeyRef.Name)
	default:
		b.WriteString("# spec.config.inline:\n")
		b.WriteString(c.Config.Inline)
		if !strings.HasSuffix(c.Config.Inline, "\n") {
			b.WriteString("\n")
		}
	}
	for i, f := range c.Files {
		fmt.Fprintf(&b, "# spec.files[%d]: ConfigMap %s at %s\n", i, f.ConfigMapName, f.MountPath)
	}
	for i, s := range c.TLS {
		fmt.Fprintf(&b, "# spec.tls[%d]: Secret %s\n", i, s.SecretName)
	}
	return b.String()
}
