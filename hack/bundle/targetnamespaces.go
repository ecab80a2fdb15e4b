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

package main

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

const (
	// controllerCommand is the entry point of the Deployment that reconciles
	// NginxOperators, the one that can be confined to namespaces.
	controllerCommand = "/controller"
	// namespacesFlag confines the controller's caches, so its reads and writes, to
	// namespaces (empty: every namespace).
	namespacesFlag = "--namespaces"
	// targetNamespacesEnv carries OLM's olm.targetNamespaces annotation, which OLM sets on
	// the pod template of every Deployment of a CSV: the OperatorGroup's target namespaces,
	// comma-separated, or "" for AllNamespaces.
	targetNamespacesEnv           = "OLM_TARGET_NAMESPACES"
	targetNamespacesAnnotationKey = "olm.targetNamespaces"
)

// runsController reports whether a Deployment runs the controller.
func runsController(d *appsv1.Deployment) bool {
	return slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool {
		return len(c.Command) > 0 && c.Command[0] == controllerCommand
	})
}

// confinedAccounts are the ServiceAccounts of the Deployments that watchTargetNamespaces
// confines: their rules on namespaced resources become the CSV's permissions, which OLM
// grants in each target namespace (and cluster-wide for AllNamespaces).
func confinedAccounts(b *base) map[string]bool {
	out := map[string]bool{}
	for i := range b.deployments {
		if runsController(&b.deployments[i]) {
			out[b.deployments[i].Spec.Template.Spec.ServiceAccountName] = true
		}
	}
	return out
}

// watchTargetNamespaces hands OLM's target namespaces to the controller through the
// downward API: an environment variable from the pod's olm.targetNamespaces annotation,
// and --namespaces=$(that variable), which the kubelet expands. AllNamespaces sets the
// annotation to "", which is every namespace. A base that already sets --namespaces is
// refused: the OperatorGroup decides under OLM.
func watchTargetNamespaces(d *appsv1.Deployment) error {
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		if len(c.Command) == 0 || c.Command[0] != controllerCommand {
			continue
		}
		for _, arg := range c.Args {
			if flag, _, _ := strings.Cut(arg, "="); flag == namespacesFlag {
				return fmt.Errorf("Deployment %s: the base sets %s, which under OLM comes from the OperatorGroup's target namespaces", d.Name, arg)
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: targetNamespacesEnv, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.annotations['%s']", targetNamespacesAnnotationKey)},
		}})
		c.Args = append(c.Args, fmt.Sprintf("%s=$(%s)", namespacesFlag, targetNamespacesEnv))
	}
	return nil
}

// clusterScoped are the cluster-scoped resources a rule of the base may name; any other
// resource is namespaced. A confined account's rule on one of these stays a cluster
// permission (a Role could not grant it).
var clusterScoped = map[string]bool{
	"authentication.k8s.io/tokenreviews":            true,
	"authorization.k8s.io/subjectaccessreviews":     true,
	"authorization.k8s.io/selfsubjectaccessreviews": true,
	"authorization.k8s.io/selfsubjectrulesreviews":  true,
	"/namespaces":                            true,
	"/nodes":                                 true,
	"/persistentvolumes":                     true,
	"rbac.authorization.k8s.io/clusterroles": true,
	"rbac.authorization.k8s.io/clusterrolebindings":                  true,
	"apiextensions.k8s.io/customresourcedefinitions":                 true,
	"apiregistration.k8s.io/apiservices":                             true,
	"admissionregistration.k8s.io/validatingwebhookconfigurations":   true,
	"admissionregistration.k8s.io/mutatingwebhookconfigurations":     true,
	"admissionregistration.k8s.io/validatingadmissionpolicies":       true,
	"admissionregistration.k8s.io/validatingadmissionpolicybindings": true,
	"admissionregistration.k8s.io/mutatingadmissionpolicies":         true,
	"admissionregistration.k8s.io/mutatingadmissionpolicybindings":   true,
	"flowcontrol.apiserver.k8s.io/flowschemas":                       true,
	"flowcontrol.apiserver.k8s.io/prioritylevelconfigurations":       true,
	"certificates.k8s.io/certificatesigningrequests":                 true,
	"storage.k8s.io/storageclasses":                                  true,
	"scheduling.k8s.io/priorityclasses":                              true,
}

// ruleIsClusterScoped reports whether a rule grants cluster-scoped resources (or
// non-resource URLs), and refuses a rule that mixes both scopes.
func ruleIsClusterScoped(rule rbacv1.PolicyRule) (bool, error) {
	cluster, namespaced := len(rule.NonResourceURLs) > 0, false
	for _, group := range rule.APIGroups {
		for _, resource := range rule.Resources {
			resource, _, _ = strings.Cut(resource, "/") // a subresource has its resource's scope
			if clusterScoped[group+"/"+resource] {
				cluster = true
			} else {
				namespaced = true
			}
		}
	}
	if cluster && namespaced {
		return false, fmt.Errorf("a rule on %v of %v mixes cluster-scoped and namespaced resources; split it", rule.Resources, rule.APIGroups)
	}
	return cluster, nil
}
