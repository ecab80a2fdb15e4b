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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

func TestTable(t *testing.T) {
	replicaMode := sample()
	replicaMode.CreationTimestamp = metav1.NewTime(time.Now().Add(-90 * time.Second))
	replicaMode.Spec.Service.Type = operator.ServiceTypeNodePort
	replicaMode.Spec.Service.Ports[0].NodePort = ptr.To[int32](30080)
	replicaMode.Status.ReadyReplicas, replicaMode.Status.AvailableReplicas = 1, 1
	replicaMode.Generation, replicaMode.Status.ObservedGeneration = 3, 3
	replicaMode.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "ImagePullFailed", ObservedGeneration: 3}}

	qpsMode := sample()
	qpsMode.Name = "api"
	qpsMode.Spec.Replicas = nil
	qpsMode.Spec.QPS = &operator.QPSSpec{SinglePodQPS: 800, TotalQPS: 2401}
	qpsMode.Status.RealQPS = ptr.To[int64](1600)
	// The spec moved on since the condition was written.
	qpsMode.Generation, qpsMode.Status.ObservedGeneration = 2, 1
	qpsMode.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "OperatorSucceeded", ObservedGeneration: 1}}

	table, err := tableConvertor{}.ConvertToTable(context.Background(),
		&operator.NginxOperatorList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}, Items: []operator.NginxOperator{*replicaMode, *qpsMode}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			names = append(names, c.Name)
		}
	}
	if got, want := len(table.ColumnDefinitions), 11; got != want {
		t.Fatalf("got %d columns, want %d", got, want)
	}
	if got := strings.Join(names, ","); got != "Name,Ready,Reason,Pods,Ports,Age" {
		t.Errorf("default columns = %v", got)
	}
	if table.ResourceVersion != "42" {
		t.Errorf("table resourceVersion = %q", table.ResourceVersion)
	}
	want := [][]interface{}{
		{"web", "False", "ImagePullFailed", "1/2", "80/TCP", "90s", int64(2), int64(1), "nginx:1.27.4", "NodePort(80:30080)", "<none>"},
		{"api", "Unknown", "NotObserved", "2/4", "80/TCP", "<unknown>", int64(4), int64(2), "nginx:1.27.4", "ClusterIP(80)", "2401/800 (real 1600)"},
	}
	for i, row := range table.Rows {
		for j, cell := range row.Cells {
			if cell != want[i][j] {
				t.Errorf("row %d column %s = %#v, want %#v", i, table.ColumnDefinitions[j].Name, cell, want[i][j])
			}
		}
	}

	noHeaders, err := tableConvertor{}.ConvertToTable(context.Background(), replicaMode, &metav1.TableOptions{NoHeaders: true})
	if err != nil || len(noHeaders.ColumnDefinitions) != 0 || len(noHeaders.Rows) != 1 {
		t.Errorf("single object without headers: %v, %+v", err, noHeaders)
	}
}
