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
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"path/filepath"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/nginx-operator/test/framework"
)

// benchUser is the identity the benchmark's clients use: an ordinary user that RBAC
// allows on both resources, as users and controllers are. The stack's admin is in
// system:masters, which every authorizer lets through without a question, so it would
// measure neither kube-apiserver's RBAC for the CRD nor our apiserver's delegated
// authorization.
const benchUser = "nginx-operator-bench"

// benchIdentity is the client certificate of benchUser, in the stack's PKI.
func benchIdentity(localDir string) (certFile, keyFile string) {
	pki := filepath.Join(localDir, "pki")
	return filepath.Join(pki, "bench.crt"), filepath.Join(pki, "bench.key")
}

// issueBenchIdentity signs benchUser's client certificate with the cluster CA, which
// kube-apiserver and (by delegation) our apiserver trust.
func issueBenchIdentity(localDir string) error {
	pki := filepath.Join(localDir, "pki")
	ca, err := tls.LoadX509KeyPair(filepath.Join(pki, "ca.crt"), filepath.Join(pki, "ca.key"))
	if err != nil {
		return fmt.Errorf("the cluster CA: %w", err)
	}
	cert, err := framework.IssueCertificate(&ca, benchUser, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return err
	}
	certFile, keyFile := benchIdentity(localDir)
	return framework.WriteKeyPair(cert, certFile, keyFile)
}

// grantBenchIdentity lets benchUser do everything the scenarios do on every target's
// resource, and waits until kube-apiserver's RBAC says so.
func grantBenchIdentity(ctx context.Context, admin *rest.Config, targets []*Target) error {
	client, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: benchUser}}
	for _, t := range targets {
		role.Rules = append(role.Rules, rbacv1.PolicyRule{
			APIGroups: []string{t.GV.Group},
			Resources: []string{t.Resource, t.Resource + "/status"},
			Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"},
		})
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("the benchmark's ClusterRole: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: benchUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: benchUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: benchUser}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("the benchmark's ClusterRoleBinding: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, t := range targets {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: benchUser, Groups: []string{"system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: t.Namespace, Verb: "create", Group: t.GV.Group, Resource: t.Resource},
			}}
			got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil || !got.Status.Allowed {
				return false, nil
			}
		}
		return true, nil
	})
}
