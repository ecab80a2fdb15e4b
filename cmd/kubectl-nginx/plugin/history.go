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
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/generated/clientset/versioned/scheme"
	v1alpha2client "github.com/example/nginx-operator/pkg/generated/clientset/versioned/typed/operator/v1alpha2"
)

func newHistoryCommand(c *clients, streams genericiooptions.IOStreams) *cobra.Command {
	printFlags := genericclioptions.NewPrintFlags("").WithTypeSetter(scheme.Scheme)
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "List the kept revisions of an NginxOperator's content, the newest marked *",
		Example: "  kubectl nginx history web -n shop\n" +
			"  kubectl nginx history web -o yaml",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			api, namespace, err := c.operator()
			if err != nil {
				return err
			}
			no, revisions, err := history(cmd.Context(), api, namespace, args[0])
			if err != nil {
				return err
			}
			if printed, err := printWith(printFlags, &v1alpha2.NginxOperatorRevisionList{Items: revisions}, streams.Out); printed {
				return err
			}
			if len(revisions) == 0 {
				_, err := fmt.Fprintf(streams.ErrOut, "NginxOperator %s has no revision: its spec never mounted config, files or tls.\n", no.Name)
				return err
			}
			return writeHistory(streams.Out, revisions, no.Status.Revision, time.Now())
		},
	}
	printFlags.AddFlags(cmd)
	return cmd
}

// history reads the NginxOperator and its kept revisions, oldest first.
func history(ctx context.Context, api v1alpha2client.OperatorV1alpha2Interface, namespace, name string) (*v1alpha2.NginxOperator, []v1alpha2.NginxOperatorRevision, error) {
	no, err := api.NginxOperators(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	list, err := api.NginxOperatorRevisions(namespace).List(ctx, metav1.ListOptions{LabelSelector: "operator.example.com/nginxoperator=" + name})
	if err != nil {
		return nil, nil, err
	}
	var revisions []v1alpha2.NginxOperatorRevision
	for _, r := range list.Items {
		// Only this object's, and only committed ones.
		if owner := metav1.GetControllerOf(&r); owner != nil && owner.UID == no.UID && r.Revision <= no.Status.Revision {
			revisions = append(revisions, r)
		}
	}
	sort.Slice(revisions, func(i, j int) bool { return revisions[i].Revision < revisions[j].Revision })
	return no, revisions, nil
}

// writeHistory prints one line a revision, as "kubectl rollout history" does.
func writeHistory(out io.Writer, revisions []v1alpha2.NginxOperatorRevision, current int64, now time.Time) error {
	w := printers.GetNewTabWriter(out)
	table := lines{w: w}
	table.printf("REVISION\tREASON\tCHANGED\tREQUESTER\tAGE\tHASH\n")
	for _, r := range revisions {
		number := fmt.Sprint(r.Revision)
		if r.Revision == current {
			number += "*"
		}
		reason := string(r.Reason)
		if r.Reason == v1alpha2.RevisionRolledBack {
			reason = fmt.Sprintf("RolledBack to %d", r.RolledBackTo)
		}
		changed := strings.Join(r.Changed, ",")
		if changed == "" {
			changed = "<none>"
		}
		requester := r.Requester
		if requester == "" {
			requester = "<unknown>"
		}
		hash := r.ContentHash
		if len(hash) > 12 {
			hash = hash[:12]
		}
		table.printf("%s\t%s\t%s\t%s\t%s\t%s\n", number, reason, changed, requester, duration.HumanDuration(now.Sub(r.CreationTimestamp.Time)), hash)
	}
	if table.err != nil {
		return table.err
	}
	return w.Flush()
}
