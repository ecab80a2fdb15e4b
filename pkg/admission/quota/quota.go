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

// Package quota makes the cluster's ResourceQuotas count NginxOperators, as kube-apiserver
// counts a CRD's objects: k8s.io/apiserver's ResourceQuota admission plugin, given the one
// evaluator this server needs, `count/nginxoperators.operator.example.com`. The plugin
// reads ResourceQuotas from kube-apiserver and charges a create to their status there;
// kube-controller-manager's quota controller computes the usage from our objects (through
// discovery and the aggregation layer) and gives it back when one is deleted.
package quota

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	quotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// PluginName is kube's name for the plugin, in --enable-admission-plugins and --disable-admission-plugins.
const PluginName = resourcequota.PluginName

// nginxOperators is the resource whose objects are counted.
var nginxOperators = operator.Resource("nginxoperators")

// ResourceName is what a ResourceQuota's spec.hard names to limit the number of NginxOperators.
var ResourceName = generic.ObjectCountQuotaResourceNameFor(nginxOperators)

// Register adds kube's ResourceQuota plugin (with its --admission-control-config-file
// configuration) to plugins.
func Register(plugins *admission.Plugins) { resourcequota.Register(plugins) }

// NewInitializer returns the admission initializer that gives the ResourceQuota plugin its
// evaluators. Usage of existing objects, which only a full recount needs, is listed through
// loopback, the server's client of itself, as metadata: a count needs nothing else.
func NewInitializer(loopback *rest.Config) (admission.PluginInitializer, error) {
	client, err := metadata.NewForConfig(loopback)
	if err != nil {
		return nil, err
	}
	list := func(namespace string) ([]runtime.Object, error) {
		objects, err := client.Resource(v1alpha2.SchemeGroupVersion.WithResource(nginxOperators.Resource)).
			Namespace(namespace).List(context.TODO(), metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return meta.ExtractList(objects)
	}
	evaluators := []quotav1.Evaluator{generic.NewObjectCountEvaluator(nginxOperators, list, "")}
	return configurationInitializer{generic.NewConfiguration(evaluators, nil)}, nil
}

// configurationInitializer hands a quota configuration to the plugins that want one.
type configurationInitializer struct{ configuration quotav1.Configuration }

// Initialize runs after the generic initializer, which gives the plugin the drain signal
// that SetQuotaConfiguration needs.
func (i configurationInitializer) Initialize(plugin admission.Interface) {
	if wants, ok := plugin.(initializer.WantsQuotaConfiguration); ok {
		wants.SetQuotaConfiguration(i.configuration)
	}
}
