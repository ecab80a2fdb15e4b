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

package builders

import (
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// Deployment returns the Deployment the NginxOperator asks for; contentHash is the hash of
// what it mounts from ConfigMaps and Secrets ("" when it mounts none). Only fields set
// here are owned by the controller; everything else is left to Kubernetes defaults and
// other managers. The exporter, when spec.metrics is on, runs DefaultExporterImage.
func Deployment(no *v1alpha2.NginxOperator, contentHash string) (*appsv1ac.DeploymentApplyConfiguration, error) {
	return DeploymentWithExporter(no, contentHash, DefaultExporterImage)
}

// DeploymentWithExporter is Deployment with the exporter image the controller was given.
func DeploymentWithExporter(no *v1alpha2.NginxOperator, contentHash, exporterImage string) (*appsv1ac.DeploymentApplyConfiguration, error) {
	template, err := podTemplate(no, contentHash, exporterImage)
	if err != nil {
		return nil, err
	}
	return appsv1ac.Deployment(no.Name, no.Namespace).
		WithLabels(objectLabels(no)).
		WithOwnerReferences(ownerReference(no)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(DesiredReplicas(&no.Spec)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(no))).
			WithTemplate(template)), nil
}
