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

package trust

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
)

// children is what the controller builds of one NginxOperator.
type children struct {
	pod     corev1.PodTemplateSpec
	service corev1.Service
	budget  bool
}

func build(no *v1alpha2.NginxOperator) (children, error) {
	var c children
	d, err := builders.DeploymentWithExporter(no, "", builders.DefaultExporterImage)
	if err != nil {
		return c, err
	}
	var deployment appsv1.Deployment
	if err := roundTrip(d, &deployment); err != nil {
		return c, err
	}
	c.pod = deployment.Spec.Template
	if err := roundTrip(builders.Service(no), &c.service); err != nil {
		return c, err
	}
	c.budget = builders.PodDisruptionBudget(no) != nil
	return c, nil
}

func roundTrip(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// grants lists what the children get that matters to who may write them: every
// reference to an object of the namespace, the identity, the placement, the labels
// and annotations others act on, host access, and how the Service exposes the pods.
// Names derived from the NginxOperator's own (its inline configuration's ConfigMap) and
// the controller's own labels and annotations are the controller's, not grants.
func grants(no *v1alpha2.NginxOperator, c children) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	spec := &c.pod.Spec
	own := map[string]bool{builders.ConfigMapName(no): true}
	for _, v := range spec.Volumes {
		switch {
		case v.Secret != nil:
			add("Secret %s", v.Secret.SecretName)
		case v.ConfigMap != nil && !own[v.ConfigMap.Name]:
			add("ConfigMap %s", v.ConfigMap.Name)
		case v.Projected != nil:
			add("projected volume %s", v.Name)
		case v.EmptyDir == nil && v.DownwardAPI == nil && v.ConfigMap == nil:
			add("volume %s", v.Name)
		}
	}
	for _, ctr := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		for _, e := range ctr.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add("env from Secret %s", e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				add("env from ConfigMap %s", e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
		for _, e := range ctr.EnvFrom {
			add("envFrom %v", e)
		}
		for _, p := range ctr.Ports {
			if p.HostPort != 0 {
				add("host port %d", p.HostPort)
			}
		}
	}
	if spec.ServiceAccountName != "" {
		add("ServiceAccount %s", spec.ServiceAccountName)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		add("a ServiceAccount token")
	}
	for _, s := range spec.ImagePullSecrets {
		add("image pull Secret %s", s.Name)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC || spec.HostUsers != nil && *spec.HostUsers {
		add("host namespaces")
	}
	for k, v := range spec.NodeSelector {
		add("node selector %s=%s", k, v)
	}
	if spec.Affinity != nil {
		add("affinity %v", *spec.Affinity)
	}
	for _, t := range spec.Tolerations {
		add("toleration %v", t)
	}
	if spec.PriorityClassName != "" || spec.Priority != nil {
		add("priority class %s", spec.PriorityClassName)
	}
	for _, c := range spec.TopologySpreadConstraints {
		if c.LabelSelector != nil && !ownSelector(no, c.LabelSelector.MatchLabels) || c.LabelSelector != nil && len(c.LabelSelector.MatchExpressions) > 0 {
			add("spread by %v", *c.LabelSelector)
		}
	}
	selector := builders.SelectorLabels(no)
	for k, v := range c.pod.Labels {
		if selector[k] != v && k != builders.ManagedByLabel {
			add("pod label %s=%s", k, v)
		}
	}
	for k, v := range c.pod.Annotations {
		if !strings.HasPrefix(k, "operator.example.com/") {
			add("pod annotation %s=%s", k, v)
		}
	}
	if c.service.Spec.Type != corev1.ServiceTypeClusterIP && c.service.Spec.Type != "" {
		add("a Service of type %s", c.service.Spec.Type)
	}
	for k, v := range c.service.Labels {
		if selector[k] != v && k != builders.ManagedByLabel {
			add("Service label %s=%s", k, v)
		}
	}
	for k, v := range c.service.Annotations {
		add("Service annotation %s=%s", k, v)
	}
	if c.budget {
		add("a PodDisruptionBudget")
	}
	sort.Strings(out)
	return out
}

func ownSelector(no *v1alpha2.NginxOperator, labels map[string]string) bool {
	for k, v := range labels {
		if builders.SelectorLabels(no)[k] != v {
			return false
		}
	}
	return true
}

// restricted evaluates the pod template against the restricted Pod Security profile
// as Pod Security admission would at the namespace's latest version.
var restrictedEvaluator = func() psapolicy.Evaluator {
	e, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		panic(err)
	}
	return e
}()

func beyondRestricted(pod corev1.PodTemplateSpec) []string {
	var out []string
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	for _, r := range restrictedEvaluator.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return out
}
