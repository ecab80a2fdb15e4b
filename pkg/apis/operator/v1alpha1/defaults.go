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

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_NginxOperator defaults port and replicas. Replicas stay unset when the
// object is in QPS mode (recorded in the preserved-fields annotation), because
// replicas and qps are mutually exclusive.
func SetDefaults_NginxOperator(obj *NginxOperator) {
	if obj.Spec.Port == nil {
		port := int32(v1alpha2.DefaultPortNumber)
		obj.Spec.Port = &port
	}
	if obj.Spec.Replicas == nil && !preservedQPSMode(obj.Annotations) {
		obj.Spec.Replicas = ptr.To(operand.DefaultReplicas)
	}
}
