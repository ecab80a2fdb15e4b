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
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// newDecisionCommand is promote or abort: it names the staged configuration being
// compared (status.canary.hash) in the NginxOperator's decision annotation, which the
// controller acts on at once. A decision names one configuration: it never applies to a
// later one.
func newDecisionCommand(c *clients, streams genericiooptions.IOStreams, verb, short, done string) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long: short + ".\nIt writes the " + v1alpha2.CanaryDecisionAnnotation + " annotation of the NginxOperator\n" +
			"(patch on nginxoperators), naming the configuration in status.canary, which the controller acts on.",
		Example: "  kubectl nginx " + verb + " web",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, namespace, err := c.operator()
			if err != nil {
				return err
			}
			no, err := api.NginxOperators(namespace).Get(cmd.Context(), args[0], metav1.GetOptions{})
			if err != nil {
				return err
			}
			st := no.Status.Canary
			if st == nil || st.Phase != v1alpha2.CanaryAnalyzing {
				phase := "none"
				if st != nil {
					phase = string(st.Phase) + " " + st.Hash
				}
				return fmt.Errorf("nginxoperator %s has no staged configuration being compared (status.canary: %s)", no.Name, phase)
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
				"resourceVersion": no.ResourceVersion,
				"annotations":     map[string]string{v1alpha2.CanaryDecisionAnnotation: verb + " " + st.Hash},
			}})
			if err != nil {
				return err
			}
			if _, err := api.NginxOperators(namespace).Patch(cmd.Context(), no.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-nginx"}); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "nginxoperator.operator.example.com/%s: configuration %s (revision %d) %s\n", no.Name, st.Hash, st.Revision, done)
			return err
		},
	}
}
