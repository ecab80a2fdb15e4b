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
	"fmt"
	"strconv"
	"strings"
)

// SelectableFields are the fields lists and watches of nginxoperators filter on with a
// field selector, in every version, besides metadata.name and metadata.namespace: what a
// CRD's selectableFields would offer (`kubectl get ngx --field-selector spec.image=nginx:1.27`).
var SelectableFields = []string{"spec.image", "spec.service.type", "status.readyReplicas"}

// FieldLabelConversion takes a field selector's label as a version names it to the label
// the storage filters on: the same, for every selectable field. Other labels are refused,
// naming those that are supported.
func FieldLabelConversion(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace":
		return label, value, nil
	}
	for _, f := range SelectableFields {
		if label == f {
			return label, value, nil
		}
	}
	return "", "", fmt.Errorf("field label not supported: %s (supported: metadata.name, metadata.namespace, %s)", label, strings.Join(SelectableFields, ", "))
}

// SelectableFieldValues returns the value of each selectable field of o: the Service type
// is ClusterIP when the spec names none, as the Service the controller makes.
func SelectableFieldValues(o *NginxOperator) map[string]string {
	serviceType := ServiceTypeClusterIP
	if o.Spec.Service != nil && o.Spec.Service.Type != "" {
		serviceType = o.Spec.Service.Type
	}
	return map[string]string{
		"spec.image":           o.Spec.Image,
		"spec.service.type":    string(serviceType),
		"status.readyReplicas": strconv.Itoa(int(o.Status.ReadyReplicas)),
	}
}
