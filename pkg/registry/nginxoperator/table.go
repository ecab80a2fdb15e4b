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

package nginxoperator

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Columns with priority 1 appear only with "kubectl get -o wide".
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the NginxOperator, its Deployment and its Service."},
	{Name: "Ready", Type: "string", Description: "Status of the Ready condition; Unknown until the controller has seen the current generation."},
	{Name: "Reason", Type: "string", Description: "Reason of the Ready condition: what it waits for, or why it is stalled."},
	{Name: "Pods", Type: "string", Description: "Ready pods out of the desired pods."},
	{Name: "Ports", Type: "string", Description: "Container ports of nginx."},
	{Name: "Age", Type: "string", Description: "Time since creation."},
	{Name: "Replicas", Type: "integer", Priority: 1, Description: "Desired pods: spec.replicas, or ceil(totalQPS/singlePodQPS) in QPS mode."},
	{Name: "Available", Type: "integer", Priority: 1, Description: "Available pods."},
	{Name: "Image", Type: "string", Priority: 1, Description: "nginx container image."},
	{Name: "Service", Type: "string", Priority: 1, Description: "Service type and ports (port:nodePort)."},
	{Name: "QPS", Type: "string", Priority: 1, Description: "totalQPS/singlePodQPS in QPS mode, and the observed real QPS."},
}

// tableConvertor renders NginxOperators for kubectl.
type tableConvertor struct{}

func (tableConvertor) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := newTable(object, tableOptions, tableColumns)
	var err error
	switch o := object.(type) {
	case *operator.NginxOperator:
		table.Rows = []metav1.TableRow{tableRow(o)}
	case *operator.NginxOperatorList:
		table.Rows = make([]metav1.TableRow, 0, len(o.Items))
		for i := range o.Items {
			table.Rows = append(table.Rows, tableRow(&o.Items[i]))
		}
	default:
		err = fmt.Errorf("cannot render %T as a table of nginxoperators", object)
	}
	return table, err
}

func tableRow(o *operator.NginxOperator) metav1.TableRow {
	desired := o.Spec.DesiredReplicas()
	ready, reason := readyCells(o)
	return metav1.TableRow{
		Object: runtime.RawExtension{Object: o},
		Cells: []interface{}{
			o.Name,
			ready,
			reason,
			fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, desired),
			portsCell(o),
			ageCell(o.CreationTimestamp),
			int64(desired),
			int64(o.Status.AvailableReplicas),
			o.Spec.Image,
			serviceCell(o.Spec.Service),
			qpsCell(o),
		},
	}
}

// readyCells show the Ready condition, as Flux and Argo CD users read it; a condition
// older than the spec says nothing about it yet.
func readyCells(o *operator.NginxOperator) (string, string) {
	c := meta.FindStatusCondition(o.Status.Conditions, v1alpha2.ConditionReady)
	switch {
	case c == nil:
		return string(metav1.ConditionUnknown), "<none>"
	case o.Status.ObservedGeneration < o.Generation || c.ObservedGeneration < o.Generation:
		return string(metav1.ConditionUnknown), "NotObserved"
	}
	return string(c.Status), c.Reason
}

func portsCell(o *operator.NginxOperator) string {
	if len(o.Spec.Ports) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(o.Spec.Ports))
	for _, p := range o.Spec.Ports {
		parts = append(parts, fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol))
	}
	return strings.Join(parts, ",")
}

func serviceCell(svc *operator.ServiceSpec) string {
	if svc == nil {
		return "<none>"
	}
	parts := make([]string, 0, len(svc.Ports))
	for _, p := range svc.Ports {
		part := strconv.Itoa(int(p.Port))
		if p.NodePort != nil {
			part += ":" + strconv.Itoa(int(*p.NodePort))
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("%s(%s)", svc.Type, strings.Join(parts, ","))
}

func qpsCell(o *operator.NginxOperator) string {
	if o.Spec.QPS == nil {
		return "<none>"
	}
	cell := fmt.Sprintf("%d/%d", o.Spec.QPS.TotalQPS, o.Spec.QPS.SinglePodQPS)
	if o.Status.RealQPS != nil {
		cell += fmt.Sprintf(" (real %d)", *o.Status.RealQPS)
	}
	return cell
}

func ageCell(created metav1.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(metav1.Now().Sub(created.Time))
}

// newTable starts the table of object: the columns unless the client asked for no
// headers, and the list's or the object's resourceVersion and paging.
func newTable(object, tableOptions runtime.Object, columns []metav1.TableColumnDefinition) *metav1.Table {
	table := &metav1.Table{}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = columns
	}
	if m, err := meta.ListAccessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
		table.Continue = m.GetContinue()
		table.RemainingItemCount = m.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	return table
}
