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
	"sort"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// Bindings that OLM v0 creates by itself for the ServiceAccount of a Deployment that
// serves an owned API service (installCertRequirementsForDeployment in OLM's
// pkg/controller/install): delegated authentication and authorization, and reading
// kube-system/extension-apiserver-authentication. A CSV could not carry them anyway: its
// permissions are rules, and these roles are the cluster's.
const (
	authDelegatorClusterRole = "system:auth-delegator"
	authReaderRole           = "extension-apiserver-authentication-reader"
	authReaderNamespace      = "kube-system"
)

// permissions turns the base's RBAC into the CSV's namespaced permissions (rules of Roles,
// or ClusterRoles bound by RoleBindings, in the install namespace) and cluster
// permissions (ClusterRoles bound cluster-wide), one entry per ServiceAccount. OLM
// creates the ServiceAccounts, Roles, ClusterRoles and bindings from them.
//
// The rules on namespaced resources of a confined account (the controller's, which
// follows the OperatorGroup's target namespaces) bound cluster-wide in the base become
// namespaced permissions too: OLM grants those in the install namespace and in every
// target namespace, and lifts them to a ClusterRole and ClusterRoleBinding when the
// OperatorGroup targets all namespaces, which is what the base grants.
func permissions(b *base, apiServerAccount string, confined map[string]bool) (namespaced, cluster []operatorsv1alpha1.StrategyDeploymentPermissions, err error) {
	namespacedRules := map[string][]rbacv1.PolicyRule{}
	clusterRules := map[string][]rbacv1.PolicyRule{}

	for _, binding := range b.clusterRoleBindings {
		accounts, err := serviceAccounts(b.namespace, "ClusterRoleBinding "+binding.Name, binding.Subjects)
		if err != nil {
			return nil, nil, err
		}
		role, defined := b.clusterRoles[binding.RoleRef.Name]
		switch {
		case binding.RoleRef.Kind == "ClusterRole" && defined:
			for _, account := range accounts {
				for _, rule := range role.Rules {
					isCluster, err := ruleIsClusterScoped(rule)
					if err != nil {
						return nil, nil, fmt.Errorf("ClusterRole %s: %w", role.Name, err)
					}
					if confined[account] && !isCluster {
						namespacedRules[account] = append(namespacedRules[account], rule)
					} else {
						clusterRules[account] = append(clusterRules[account], rule)
					}
				}
			}
		case binding.RoleRef.Name == authDelegatorClusterRole && onlyAccount(accounts, apiServerAccount):
			// OLM binds it.
		default:
			return nil, nil, fmt.Errorf("ClusterRoleBinding %s: %s %s is not defined in the base, so the CSV cannot carry its rules", binding.Name, binding.RoleRef.Kind, binding.RoleRef.Name)
		}
	}

	for _, binding := range b.roleBindings {
		accounts, err := serviceAccounts(b.namespace, "RoleBinding "+binding.Name, binding.Subjects)
		if err != nil {
			return nil, nil, err
		}
		if binding.Namespace == authReaderNamespace && binding.RoleRef.Kind == "Role" && binding.RoleRef.Name == authReaderRole && onlyAccount(accounts, apiServerAccount) {
			continue // OLM binds it.
		}
		if binding.Namespace != b.namespace {
			return nil, nil, fmt.Errorf("RoleBinding %s/%s: a CSV grants namespaced permissions only in the namespace it is installed in", binding.Namespace, binding.Name)
		}
		var rules []rbacv1.PolicyRule
		if role, ok := b.roles[binding.Namespace+"/"+binding.RoleRef.Name]; ok && binding.RoleRef.Kind == "Role" {
			rules = role.Rules
		} else if role, ok := b.clusterRoles[binding.RoleRef.Name]; ok && binding.RoleRef.Kind == "ClusterRole" {
			rules = role.Rules
		} else {
			return nil, nil, fmt.Errorf("RoleBinding %s: %s %s is not defined in the base, so the CSV cannot carry its rules", binding.Name, binding.RoleRef.Kind, binding.RoleRef.Name)
		}
		for _, account := range accounts {
			namespacedRules[account] = append(namespacedRules[account], rules...)
		}
	}
	return byAccount(namespacedRules), byAccount(clusterRules), nil
}

// serviceAccounts returns the names of the subjects, which must all be ServiceAccounts
// of the install namespace: OLM grants permissions only to the ServiceAccounts it creates.
func serviceAccounts(namespace, binding string, subjects []rbacv1.Subject) ([]string, error) {
	var names []string
	for _, s := range subjects {
		if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != namespace {
			return nil, fmt.Errorf("%s: subject %s %s/%s is not a ServiceAccount of %s", binding, s.Kind, s.Namespace, s.Name, namespace)
		}
		names = append(names, s.Name)
	}
	return names, nil
}

func onlyAccount(accounts []string, account string) bool {
	return len(accounts) == 1 && accounts[0] == account
}

// byAccount lists the rules per ServiceAccount, sorted by name for a stable CSV.
func byAccount(rules map[string][]rbacv1.PolicyRule) []operatorsv1alpha1.StrategyDeploymentPermissions {
	var out []operatorsv1alpha1.StrategyDeploymentPermissions
	for account, r := range rules {
		out = append(out, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: account, Rules: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ServiceAccountName < out[j].ServiceAccountName })
	return out
}
