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

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The CRDs the overlays' objects need, from the projects' own Go modules (fetched through
// the module proxy into the module cache, so nothing of theirs is copied into this
// repository), at the versions hack/tools/ecosystem pins for the real-node
// test, which runs these projects.
var overlayCRDs = []struct {
	module, pinnedIn, dir string
	files                 []string
}{
	// deploy/crds holds plain controller-gen output; the Helm chart's copies are templates.
	{"github.com/cert-manager/cert-manager", "hack/tools/ecosystem", "deploy/crds",
		[]string{"cert-manager.io_issuers.yaml", "cert-manager.io_certificates.yaml"}},
	{"github.com/prometheus-operator/prometheus-operator", "hack/tools/ecosystem", "example/prometheus-operator-crd",
		[]string{"monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"}},
}

// kustomizations are the base and every overlay a user may apply with kubectl apply -k.
var kustomizations = []string{
	"artifacts/deploy",
	"artifacts/overlays/cert-manager",
	"artifacts/overlays/prometheus",
	"artifacts/overlays/cert-manager-prometheus",
	"artifacts/overlays/single-member-etcd",
	"artifacts/overlays/etcd-backup",
	"artifacts/overlays/encryption-at-rest",
	"artifacts/overlays/namespaced",
}

// TestKustomizationsPassServerDryRun renders the base and every overlay with kubectl's
// kustomize and sends the result through the kube-apiserver's validation, admission and
// defaulting, with cert-manager's and the Prometheus Operator's CRDs installed.
func TestKustomizationsPassServerDryRun(t *testing.T) {
	t.Parallel()
	installOverlayCRDs(t)
	for _, dir := range kustomizations {
		t.Run(dir, func(t *testing.T) {
			rendered := mustKubectl(t, "", "kustomize", filepath.Join(repoRoot, dir))
			out := mustKubectl(t, rendered, "apply", "--dry-run=server", "-f", "-")
			for _, obj := range decodeObjects(t, rendered) {
				// kubectl names each object it applied as <kind>.<group>/<name>.
				ref := strings.ToLower(obj.GetKind())
				if group := obj.GroupVersionKind().Group; group != "" {
					ref += "." + group
				}
				ref += "/" + obj.GetName()
				if !strings.Contains(out, ref+" ") {
					t.Errorf("the dry run did not apply %s:\n%s", ref, out)
				}
			}
		})
	}
}

// TestKustomizeOverlaySetsImages checks that an overlay of the base sets the operator's, the
// exporter's and etcd's images through images:, as hack/deploy-to-node.sh does.
func TestKustomizeOverlaySetsImages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(repoRoot, "artifacts", "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := "resources: [" + base + "]\nimages:\n" +
		"  - {name: example.com/nginx-operator, newName: registry.test/nginx-operator, newTag: v9.9.9}\n" +
		"  - {name: example.com/nginx-operator/nginx-exporter, newName: registry.test/nginx-exporter, newTag: v9.9.8}\n" +
		"  - {name: registry.k8s.io/etcd, newName: registry.test/etcd, newTag: 3.6.8}\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, obj := range decodeObjects(t, mustKubectl(t, "", "kustomize", dir)) {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		initContainers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "initContainers")
		for _, c := range append(containers, initContainers...) {
			c := c.(map[string]any)
			images[obj.GetName()+"/"+c["name"].(string)] = c["image"].(string)
		}
	}
	want := map[string]string{
		"nginx-operator-controller/nginx-exporter": "registry.test/nginx-exporter:v9.9.8",
		"nginx-operator-apiserver/apiserver":       "registry.test/nginx-operator:v9.9.9",
		"nginx-operator-controller/controller":     "registry.test/nginx-operator:v9.9.9",
		"nginx-operator-etcd/etcd":                 "registry.test/etcd:3.6.8",
	}
	for k, v := range want {
		if images[k] != v {
			t.Errorf("%s runs %q, want %q (all: %v)", k, images[k], v, images)
		}
	}
}

// TestEtcdMembersAgree checks, in the base and in the single-member overlay, that the etcd
// StatefulSet bootstraps exactly as many members as it has replicas, under their pod names
// and DNS names, and that the apiserver is given every one of them.
func TestEtcdMembersAgree(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string]int{"artifacts/deploy": 3, "artifacts/overlays/single-member-etcd": 1} {
		t.Run(dir, func(t *testing.T) {
			objs := decodeObjects(t, mustKubectl(t, "", "kustomize", filepath.Join(repoRoot, dir)))
			var replicas int64
			var initialCluster, etcdServers string
			for _, obj := range objs {
				containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
				for _, c := range containers {
					c := c.(map[string]any)
					args, _, _ := unstructured.NestedStringSlice(c, "command")
					more, _, _ := unstructured.NestedStringSlice(c, "args")
					for _, arg := range append(args, more...) {
						if v, ok := strings.CutPrefix(arg, "--initial-cluster="); ok && obj.GetName() == "nginx-operator-etcd" {
							initialCluster = v
						}
						if v, ok := strings.CutPrefix(arg, "--etcd-servers="); ok && obj.GetName() == "nginx-operator-apiserver" {
							etcdServers = v
						}
					}
				}
				if obj.GetKind() == "StatefulSet" && obj.GetName() == "nginx-operator-etcd" {
					// Decoded from YAML through JSON: a number is an int64 or a float64.
					switch n := obj.Object["spec"].(map[string]any)["replicas"].(type) {
					case int64:
						replicas = n
					case float64:
						replicas = int64(n)
					}
				}
			}
			if replicas != int64(want) {
				t.Errorf("the etcd StatefulSet has %d replicas, want %d", replicas, want)
			}
			var peers, clients []string
			for i := 0; i < int(replicas); i++ {
				host := fmt.Sprintf("nginx-operator-etcd-%d.nginx-operator-etcd.nginx-operator-system.svc", i)
				peers = append(peers, fmt.Sprintf("nginx-operator-etcd-%d=https://%s:2380", i, host))
				clients = append(clients, "https://"+host+":2379")
			}
			if got, want := initialCluster, strings.Join(peers, ","); got != want {
				t.Errorf("--initial-cluster=%s\nwant         %s", got, want)
			}
			if got, want := etcdServers, strings.Join(clients, ","); got != want {
				t.Errorf("the apiserver's --etcd-servers=%s\nwant                           %s", got, want)
			}
		})
	}
}

// TestCertManagerOverlayMatchesTheAPIServer checks what the dry run cannot: the serving
// Certificate writes the Secret the apiserver mounts, for the name the kube-aggregator
// dials, and the APIServices take their CA from that Certificate.
func TestCertManagerOverlayMatchesTheAPIServer(t *testing.T) {
	t.Parallel()
	objs := decodeObjects(t, mustKubectl(t, "", "kustomize", filepath.Join(repoRoot, "artifacts", "overlays", "cert-manager")))
	find := func(kind, name string) *unstructured.Unstructured {
		for i := range objs {
			if objs[i].GetKind() == kind && objs[i].GetName() == name {
				return &objs[i]
			}
		}
		t.Fatalf("the cert-manager overlay has no %s %s", kind, name)
		return nil
	}
	deployment := find("Deployment", "nginx-operator-apiserver")
	volumes, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "volumes")
	var mounted string
	for _, v := range volumes {
		if v.(map[string]any)["name"] == "serving-cert" {
			mounted, _, _ = unstructured.NestedString(v.(map[string]any), "secret", "secretName")
		}
	}
	// Every Secret the pods mount (the serving certificate, etcd's and the apiserver's etcd
	// client certificate) is one a Certificate writes, or the pods would wait for it.
	written := map[string]bool{}
	for _, obj := range objs {
		if obj.GetKind() == "Certificate" {
			secret, _, _ := unstructured.NestedString(obj.Object, "spec", "secretName")
			written[secret] = true
		}
	}
	// Which Secrets each workload mounts, so a workload that lost its Secret volumes (or
	// got them renamed) fails here instead of passing with nothing to check.
	wantMounts := map[string][]string{
		"Deployment/nginx-operator-apiserver": {"nginx-operator-apiserver-tls", "nginx-operator-etcd-client-tls"},
		"StatefulSet/nginx-operator-etcd":     {"nginx-operator-etcd-peer-tls", "nginx-operator-etcd-server-tls"},
	}
	for _, workload := range []*unstructured.Unstructured{deployment, find("StatefulSet", "nginx-operator-etcd")} {
		var secrets []string
		vols, _, _ := unstructured.NestedSlice(workload.Object, "spec", "template", "spec", "volumes")
		for _, v := range vols {
			name, found, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName")
			if !found {
				continue
			}
			secrets = append(secrets, name)
			if !written[name] {
				t.Errorf("%s %s mounts Secret %s, which no Certificate of the overlay writes", workload.GetKind(), workload.GetName(), name)
			}
		}
		slices.Sort(secrets)
		key := workload.GetKind() + "/" + workload.GetName()
		if !slices.Equal(secrets, wantMounts[key]) {
			t.Errorf("%s mounts the Secrets %v, want %v", key, secrets, wantMounts[key])
		}
		t.Logf("%s mounts the Secrets %v", key, secrets)
	}
	for _, apiservice := range []string{"v1alpha1.operator.example.com", "v1alpha2.operator.example.com"} {
		a := find("APIService", apiservice)
		if _, found, _ := unstructured.NestedString(a.Object, "spec", "caBundle"); found {
			t.Errorf("APIService %s sets caBundle; the CA injector owns it", apiservice)
		}
		from := a.GetAnnotations()["cert-manager.io/inject-ca-from"]
		namespace, name, _ := strings.Cut(from, "/")
		svcNamespace, _, _ := unstructured.NestedString(a.Object, "spec", "service", "namespace")
		svcName, _, _ := unstructured.NestedString(a.Object, "spec", "service", "name")
		cert := find("Certificate", name)
		if cert.GetNamespace() != namespace {
			t.Errorf("APIService %s injects the CA from %q, the Certificate is in %s", apiservice, from, cert.GetNamespace())
		}
		if secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); secret != mounted {
			t.Errorf("Certificate %s writes Secret %q, the apiserver mounts %q", name, secret, mounted)
		}
		dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
		if dial := svcName + "." + svcNamespace + ".svc"; !slices.Contains(dnsNames, dial) {
			t.Errorf("Certificate %s is for %v; the kube-aggregator dials %s", name, dnsNames, dial)
		}
	}
}

// installOverlayCRDs installs the pinned CRDs and removes them when the test ends.
func installOverlayCRDs(t *testing.T) {
	t.Helper()
	var names []string
	for _, crd := range overlayCRDs {
		dir := moduleDir(t, crd.module, toolModuleVersion(t, crd.pinnedIn, crd.module))
		for _, file := range crd.files {
			// Server-side: the Prometheus Operator's CRDs exceed the last-applied annotation's size.
			out := mustKubectl(t, "", "apply", "--server-side", "--field-manager=e2e-kustomize", "-o", "name", "-f", filepath.Join(dir, crd.dir, file))
			names = append(names, strings.TrimSpace(out))
		}
	}
	t.Cleanup(func() {
		if _, errOut, err := kubectl(t, "", append([]string{"delete", "--ignore-not-found"}, names...)...); err != nil {
			t.Errorf("deleting the CRDs: %v: %s", err, errOut)
		}
	})
	kc.WaitEstablished(t, 3*time.Minute, names...)
}

// moduleDir returns the module's directory in the module cache, downloading it through
// the module proxy when it is not there yet.
func moduleDir(t *testing.T, module, version string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to fetch %s: %v", module, err)
	}
	cmd := exec.Command(goTool, "mod", "download", "-json", module+"@"+version)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jsonErr := json.Unmarshal(out, &info); jsonErr != nil || err != nil || info.Error != "" || info.Dir == "" {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			out = append(out, exitErr.Stderr...)
		}
		t.Fatalf("go mod download %s@%s: %v %v\n%s", module, version, err, jsonErr, out)
	}
	return info.Dir
}

// toolModuleVersion is the version of module that the tool module in dir (relative to the
// repository) requires.
func toolModuleVersion(t *testing.T, dir, module string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", module)
	cmd.Dir = filepath.Join(repoRoot, dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the version of %s in %s: %v", module, dir, err)
	}
	return strings.TrimSpace(string(out))
}

// decodeObjects splits a multi-document YAML stream into objects.
func decodeObjects(t *testing.T, stream string) []unstructured.Unstructured {
	t.Helper()
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	var objs []unstructured.Unstructured
	for {
		var obj unstructured.Unstructured
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decoding the rendered objects: %v", err)
		}
		if obj.Object != nil {
			objs = append(objs, obj)
		}
	}
}
