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

package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/nginx-operator/test/framework"
)

// The names OLM v0 gives what it makes for the owned API service of Deployment
// nginx-operator-apiserver.
const (
	olmService    = "nginx-operator-apiserver-service"
	olmCertSecret = "nginx-operator-apiserver-service-cert"
)

// olmInstallsTheBundle runs OLM v0's olm-operator against the cluster and installs the
// committed bundle as docs/olm.md says, over the etcd volumes a removed install kept
// (dataWithoutInstall): etcd from the base, an OperatorGroup, the bundle's objects and its
// ClusterServiceVersion with only the image references replaced. The CSV reaches Succeeded; OLM's Service, serving
// certificate and APIServices (with a caBundle) serve the API; an NginxOperator becomes nginx
// pods serving traffic; deleting the CSV removes what OLM made.
func olmInstallsTheBundle(t *testing.T, refs map[string]string) {
	olmBin, crds := framework.ToolBinary(t, "OLM_BIN"), framework.ToolBinary(t, "OLM_CRDS_DIR")
	// OLM's CRDs: the ClusterServiceVersion's is too large for client-side apply.
	kc.Apply(t, 5*time.Minute, "", "-f", crds)
	kc.WaitEstablished(t, 3*time.Minute, "crd/clusterserviceversions.operators.coreos.com", "crd/operatorgroups.operators.coreos.com")
	t.Setenv("KUBECONFIG", stack.Kubeconfig())
	// olm-operator serves its health and metrics on :8080, a port it does not let us choose;
	// nothing else on this machine listens there.
	olm, err := framework.StartProcess(filepath.Join(stack.LocalDir, "logs", "olm-operator.log"), olmBin)
	if err != nil {
		t.Fatal(err)
	}
	// Its log sits with the components', which a failing run prints.
	t.Cleanup(func() { olm.Stop(os.Interrupt, 10*time.Second) })

	// etcd from the base, on the volumes a removed install kept, and its certificates.
	etcd, operator := refs["ETCD_IMAGE"], refs["NGINX_OPERATOR_IMAGE"]
	for _, f := range []string{"00-namespace.yaml", "20-etcd.yaml", "23-etcd-defrag.yaml"} {
		manifest, err := os.ReadFile(filepath.Join(stack.RepoRoot, "artifacts", "deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		mustKubectl(t, strings.ReplaceAll(strings.ReplaceAll(string(manifest), "registry.k8s.io/etcd:3.6.8-0", etcd), "example.com/nginx-operator:v0.2.0", operator), "apply", "-f", "-")
	}
	if out, err := userScript(t, 2*time.Minute, "deploy-certs.sh", "--etcd-only"); err != nil {
		t.Fatalf("hack/deploy-certs.sh --etcd-only: %v\n%s", err, out)
	}
	mustKubectl(t, "", "rollout", "status", "-n", systemNS, "statefulset/nginx-operator-etcd", "--timeout=3m")

	start := time.Now()
	mustKubectl(t, `{"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": {"name": "nginx-operator", "namespace": "nginx-operator-system"}, "spec": {}}`, "apply", "-f", "-")
	manifests := filepath.Join(stack.RepoRoot, "bundle", "manifests")
	entries, err := os.ReadDir(manifests)
	if err != nil {
		t.Fatal(err)
	}
	var csv string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(manifests, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".clusterserviceversion.yaml") {
			csv = strings.NewReplacer("example.com/nginx-operator:v0.2.0", operator,
				"example.com/nginx-operator/nginx-exporter:v0.2.0", refs["NGINX_EXPORTER_IMAGE"]).Replace(string(data))
			continue
		}
		// The bundle's other objects, which OLM's catalog operator applies in the install namespace.
		mustKubectl(t, string(data), "apply", "-n", systemNS, "-f", "-")
	}
	applyCSVPermissions(t, csv)
	kc.Apply(t, 5*time.Minute, csv, "-n", systemNS, "-f", "-")
	name := get(t, "get", "csv", "-n", systemNS, "-o", "jsonpath={.items[0].metadata.name}")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("at the failure:\n%s\n%s", get(t, "get", "csv", "-n", systemNS, "-o", "yaml"), get(t, "get", "all", "-n", systemNS))
		}
	})
	waitFor(t, 5*time.Minute, "the ClusterServiceVersion to reach Succeeded", func() bool {
		return get(t, "get", "csv", "-n", systemNS, name, "-o", "jsonpath={.status.phase}") == "Succeeded"
	})
	t.Logf("ClusterServiceVersion %s Succeeded %s after it was applied", name, framework.Describe(time.Since(start)))

	// What OLM made for the owned API services.
	if get(t, "get", "service", "-n", systemNS, olmService, "-o", "name") == "" || get(t, "get", "secret", "-n", systemNS, olmCertSecret, "-o", "name") == "" {
		t.Fatalf("OLM made no Service %s or Secret %s", olmService, olmCertSecret)
	}
	for _, apiservice := range []string{"v1alpha2.operator.example.com", "v1alpha1.operator.example.com"} {
		spec := get(t, "get", "apiservice", apiservice, "-o", "jsonpath={.spec.service.name} {.status.conditions[?(@.type==\"Available\")].status} {.spec.caBundle}")
		if f := strings.Fields(spec); len(f) != 3 || f[0] != olmService || f[1] != "True" {
			t.Errorf("APIService %s: service, Available and caBundle %.120q; want %s, True and a caBundle", apiservice, spec, olmService)
		}
	}
	mustKubectl(t, "", "rollout", "status", "-n", systemNS, "deployment/nginx-operator-controller", "--timeout=3m")

	// The API through the aggregator, over the data the earlier tests stored, and a new
	// NginxOperator becomes nginx pods serving traffic.
	t.Logf("kubectl get nginxoperators -A: %d objects", strings.Count(mustKubectl(t, "", "get", "nginxoperators", "-A", "-o", "name"), "\n"))
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "olm-site", "--ignore-not-found", "--wait=false") })
	mustKubectl(t, `{"apiVersion": "operator.example.com/v1alpha2", "kind": "NginxOperator", "metadata": {"name": "olm-site", "namespace": "default"},
	  "spec": {"image": "`+refs["NGINX_IMAGE"]+`", "securityContext": `+rootSecurityContext+`, "replicas": 1, "ports": [{"name": "http", "containerPort": 80}]}}`, "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "180s", "ngx/olm-site")
	clusterIP := get(t, "get", "service", "olm-site", "-o", "jsonpath={.spec.clusterIP}")
	t.Logf("installed by OLM: NginxOperator olm-site's welcome page after %s", waitForWelcome(t, clusterIP+":80").Round(100*time.Millisecond))
	mustKubectl(t, "", "delete", "ngx", "olm-site", "--timeout=2m")

	// Deleting the CSV removes what OLM made: the Deployments, its Service and certificate,
	// and the APIServices.
	deleted := time.Now()
	mustKubectl(t, "", "delete", "csv", "-n", systemNS, name, "--timeout=2m")
	waitFor(t, 3*time.Minute, "OLM's Deployments, Service, certificate Secret and APIServices to go", func() bool {
		return get(t, "get", "-n", systemNS, "deployments,service/"+olmService+",secret/"+olmCertSecret, "--ignore-not-found", "-o", "name") == "" &&
			get(t, "get", "apiservices", "v1alpha2.operator.example.com", "v1alpha1.operator.example.com", "--ignore-not-found", "-o", "name") == ""
	})
	t.Logf("deleting the CSV removed the Deployments, Service %s, Secret %s and both APIServices in %s", olmService, olmCertSecret, framework.Describe(time.Since(deleted)))
}

// csvPermissions is the part of a ClusterServiceVersion that says which ServiceAccounts
// its Deployments run as and what each may do.
type csvPermissions struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Install struct {
			Spec struct {
				Permissions        []accountRules `json:"permissions"`
				ClusterPermissions []accountRules `json:"clusterPermissions"`
			} `json:"spec"`
		} `json:"install"`
	} `json:"spec"`
}

type accountRules struct {
	ServiceAccountName string              `json:"serviceAccountName"`
	Rules              []rbacv1.PolicyRule `json:"rules"`
}

// applyCSVPermissions makes the ServiceAccounts, roles and bindings of the CSV's permissions,
// as OLM's catalog operator does from a bundle's InstallPlan before olm-operator installs the
// CSV (olm-operator only checks that they exist and allow the rules). Without a catalog,
// which needs registry images, the test is that catalog step. The Roles and RoleBindings
// of the namespaced permissions carry the catalog's owner labels: for an OperatorGroup of
// all namespaces olm-operator lifts them to a ClusterRole and ClusterRoleBinding each (the
// controller's rules are namespaced permissions, granted per target namespace otherwise).
func applyCSVPermissions(t *testing.T, csv string) {
	t.Helper()
	var perms csvPermissions
	if err := yaml.Unmarshal([]byte(csv), &perms); err != nil {
		t.Fatal(err)
	}
	var objects []any
	account := func(name string) {
		objects = append(objects, &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: systemNS}})
	}
	subject := func(name string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: systemNS}}
	}
	// ownerutil.OwnerLabel, what olm-operator selects the CSV's Roles and RoleBindings by,
	// and olm.managed, without which an olm-operator that filters its informers (it does
	// when nothing it owns lacks the label) does not see them.
	owner := map[string]string{"olm.owner": perms.Metadata.Name, "olm.owner.namespace": systemNS, "olm.owner.kind": "ClusterServiceVersion", "olm.managed": "true"}
	for _, p := range perms.Spec.Install.Spec.ClusterPermissions {
		account(p.ServiceAccountName)
		name := "olm-" + p.ServiceAccountName + "-cluster"
		objects = append(objects,
			&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: p.Rules},
			&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}, Subjects: subject(p.ServiceAccountName)})
	}
	for _, p := range perms.Spec.Install.Spec.Permissions {
		account(p.ServiceAccountName)
		name := "olm-" + p.ServiceAccountName
		objects = append(objects,
			&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: systemNS, Labels: owner}, Rules: p.Rules},
			&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: systemNS, Labels: owner},
				RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}, Subjects: subject(p.ServiceAccountName)})
	}
	if len(objects) == 0 {
		t.Fatal("the CSV grants no permissions")
	}
	list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objects})
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, string(list), "apply", "-f", "-")
	t.Cleanup(func() { kubectl(t, string(list), "delete", "-f", "-", "--ignore-not-found") })
}
