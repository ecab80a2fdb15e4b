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

package operator

import (
	"strings"
	"testing"
)

func TestFieldLabelConversion(t *testing.T) {
	for _, label := range append([]string{"metadata.name", "metadata.namespace"}, SelectableFields...) {
		if got, value, err := FieldLabelConversion(label, "x"); err != nil || got != label || value != "x" {
			t.Errorf("%s: %q %q %v", label, got, value, err)
		}
	}
	if _, _, err := FieldLabelConversion("spec.replicas", "2"); err == nil || !strings.Contains(err.Error(), "spec.image, spec.service.type") {
		t.Errorf("an unsupported label: %v, want an error naming the supported ones", err)
	}
}

func TestSelectableFieldValues(t *testing.T) {
	o := &NginxOperator{Spec: NginxOperatorSpec{Image: "nginx:1.27"}, Status: NginxOperatorStatus{ReadyReplicas: 3}}
	got := SelectableFieldValues(o)
	if got["spec.image"] != "nginx:1.27" || got["spec.service.type"] != "ClusterIP" || got["status.readyReplicas"] != "3" || len(got) != len(SelectableFields) {
		t.Errorf("without spec.service: %v", got)
	}
	o.Spec.Service = &ServiceSpec{Type: ServiceTypeLoadBalancer}
	if got := SelectableFieldValues(o)["spec.service.type"]; got != "LoadBalancer" {
		t.Errorf("spec.service.type = %q", got)
	}
}
