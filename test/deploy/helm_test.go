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
	"cmp"
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/nginx-operator/test/framework"
)

const partOf = "app.kubernetes.io/part-of=nginx-operator"

// helmLifecycle switches the install from kustomize to the previous release's Helm chart
// over the same etcd volumes, upgrades it to this release's chart under a read/write
// loop as docs/operations.md says (upgradeAcrossReleases), rolls it back, and uninstalls
// it: the APIServices go first, and only what docs/operations.md says is retained stays.
func helmLifecycle(t *testing.T, refs map[string]string) {
	previous, previousTree, previousImage := waitPreviousRelease(t)
	helm := framework.ToolBinary(t, "HELM_BIN")
	runHelm := func(args ...string) string {
		t.Helper()
		start := time.Now()
		out, err := exec.Command(helm, append(args, "--kubeconfig", stack.Kubeconfig())...).CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("helm %s: %s", args[0], framework.Describe(time.Since(start)))
		return string(out)
	}

	// An object stored before the switch, to find again after it.
	mustKubectl(t, "", "create", "namespace", "kept")
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", "kept", "--wait=false") })
	mustKubectl(t, `{"apiVersion": "operator.example.com/v1alpha2", "kind": "NginxOperator", "metadata": {"name": "kept", "namespace": "kept"}, "spec": {"replicas": 0}}`, "create", "-f", "-")
	uid := get(t, "get", "ngx", "-n", "kept", "kept", "-o", "jsonpath={.metadata.uid}")

	removeInstallKeepingData(t)

	etcd := refs["ETCD_IMAGE"]
	start := time.Now()
	// Not --wait: the controllers become ready only once the APIServices are Available,
	// which needs the caBundle that deploy-certs.sh sets after the install.
	runHelm("install", "nginx-operator", filepath.Join(previousTree, "charts", "nginx-operator"), "--namespace", systemNS,
		"--set", "image.repository="+repository(previousImage), "--set", "image.tag="+tag(previousImage),
		"--set", "etcd.image.repository="+repository(etcd), "--set", "etcd.image.tag="+tag(etcd))
	deployCerts(t)
	mustKubectl(t, "", "wait", "--for=condition=Available", "--timeout=3m", "apiservice", "-l", partOf)
	for _, workload := range []string{"statefulset/nginx-operator-etcd", "deployment/nginx-operator-apiserver", "deployment/nginx-operator-controller"} {
		mustKubectl(t, "", "rollout", "status", "-n", systemNS, workload, "--timeout=3m")
	}
	t.Logf("installed %s with Helm over the same volumes; APIServices Available after %s", previous.Version, framework.Describe(time.Since(start)))
	if got := get(t, "get", "ngx", "-n", "kept", "kept", "-o", "jsonpath={.metadata.uid}"); got != uid {
		t.Errorf("the NginxOperator stored before the switch has uid %q after it, want %q", got, uid)
	}

	upgradeAcrossReleases(t, previous, runHelm, previousImage)

	deleted := watchDeletions(t)
	runHelm("uninstall", "nginx-operator", "--namespace", systemNS, "--wait", "--timeout", "5m")
	order := deleted()
	t.Logf("deleted in this order: %v", order)
	firstNonAPIService := slices.IndexFunc(order, func(s string) bool { return !strings.HasPrefix(s, "apiservice/") })
	if firstNonAPIService < 2 || slices.ContainsFunc(order[firstNonAPIService:], func(s string) bool { return strings.HasPrefix(s, "apiservice/") }) {
		t.Errorf("the APIServices were not deleted first: %v", order)
	}

	// What stays: the data volumes and claims and the certificates' Secrets (not part of
	// the release), and the namespace; nothing of the workloads or their access.
	waitFor(t, 3*time.Minute, "the release's pods to go", func() bool {
		return get(t, "get", "pods", "-n", systemNS, "-o", "name") == ""
	})
	var left []string
	for _, name := range strings.Fields(get(t, "get", "-n", systemNS, "all,configmaps,secrets,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets,persistentvolumeclaims", "-o", "name")) {
		switch {
		case strings.HasPrefix(name, "persistentvolumeclaim/"), strings.HasPrefix(name, "secret/nginx-operator-"),
			name == "configmap/kube-root-ca.crt", name == "serviceaccount/default":
			left = append(left, name)
		default:
			t.Errorf("%s is left in %s after helm uninstall", name, systemNS)
		}
	}
	if out := get(t, "get", "apiservices,clusterroles,clusterrolebindings", "-l", partOf, "-o", "name"); out != "" {
		t.Errorf("left after helm uninstall: %s", out)
	}
	if out := get(t, "get", "rolebindings", "-n", "kube-system", "-l", partOf, "-o", "name"); out != "" {
		t.Errorf("left in kube-system after helm uninstall: %s", out)
	}
	t.Logf("retained after helm uninstall: %v", left)
}

// removeInstallKeepingData removes the kustomize install but not its data: the
// APIServices first (docs/reliability.md), then everything else it created; the etcd
// volumes and the certificates' Secrets stay.
func removeInstallKeepingData(t *testing.T) {
	t.Helper()
	mustKubectl(t, "", "delete", "apiservices", "-l", partOf)
	mustKubectl(t, "", "delete", "-n", systemNS, "deployments,statefulsets,cronjobs,services,configmaps,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets", "-l", partOf)
	mustKubectl(t, "", "delete", "-n", "kube-system", "rolebindings", "-l", partOf)
	mustKubectl(t, "", "delete", "clusterroles,clusterrolebindings", "-l", partOf)
	waitFor(t, 3*time.Minute, "the kustomize install's pods to go", func() bool {
		return get(t, "get", "pods", "-n", systemNS, "-o", "name") == ""
	})
}

func repository(image string) string { return image[:strings.LastIndex(image, ":")] }
func tag(image string) string        { return image[strings.LastIndex(image, ":")+1:] }

// deployCerts runs hack/deploy-certs.sh as deploy-to-node.sh does: the same CA, renewed
// certificates, and the caBundle of the APIServices the chart created.
func deployCerts(t *testing.T) {
	t.Helper()
	cmd := exec.Command(filepath.Join(stack.RepoRoot, "hack", "deploy-certs.sh"))
	cmd.Env = append(stack.Env(), "KUBECONFIG="+stack.Kubeconfig(), "KUBECTL=/usr/bin/kubectl",
		"OUT_DIR="+filepath.Join(stack.LocalDir, "node", "deploy-certs"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/deploy-certs.sh: %v\n%s", err, out)
	}
}

// watchDeletions records the order in which the APIServices and the apiserver's and
// controller's Deployments and Services are deleted; the returned function stops and
// reports "kind/name" in that order. Three watches deliver their events in no common
// order, so the deletions are ordered by the resourceVersion of each deletion event: this
// test cluster keeps all three kinds in one etcd, whose revisions order every write.
// The function waits for the deletion event of every object the watches started with.
func watchDeletions(t *testing.T) func() []string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	client := dynamic.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu      sync.Mutex
		deleted []deletion
		pending = map[string]bool{} // listed at the start, deletion not seen yet
		wg      sync.WaitGroup
	)
	for _, w := range []struct {
		kind, namespace string
		gvr             schema.GroupVersionResource
	}{
		{"apiservice", "", schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}},
		{"deployment", systemNS, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{"service", systemNS, schema.GroupVersionResource{Version: "v1", Resource: "services"}},
	} {
		list, err := client.Resource(w.gvr).Namespace(w.namespace).List(ctx, metav1.ListOptions{LabelSelector: partOf})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			pending[w.kind+"/"+o.GetName()] = true
		}
		watcher, err := client.Resource(w.gvr).Namespace(w.namespace).Watch(ctx,
			metav1.ListOptions{LabelSelector: partOf, ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range watcher.ResultChan() {
				if ev.Type != watch.Deleted {
					continue
				}
				obj, err := apimeta.Accessor(ev.Object)
				if err != nil {
					t.Errorf("a deletion event of a %s: %v", w.kind, err)
					continue
				}
				revision, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
				if err != nil {
					t.Errorf("%s/%s deleted with resourceVersion %q: %v", w.kind, obj.GetName(), obj.GetResourceVersion(), err)
					continue
				}
				mu.Lock()
				deleted = append(deleted, deletion{w.kind + "/" + obj.GetName(), revision})
				delete(pending, w.kind+"/"+obj.GetName())
				mu.Unlock()
			}
		}()
	}
	return func() []string {
		var missing []string
		if !framework.Poll(3*time.Minute, 100*time.Millisecond, func() bool {
			mu.Lock()
			defer mu.Unlock()
			missing = slices.Sorted(maps.Keys(pending))
			return len(missing) == 0
		}) {
			t.Errorf("no deletion event within 3 minutes for %v", missing)
		}
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		slices.SortFunc(deleted, func(a, b deletion) int { return cmp.Compare(a.revision, b.revision) })
		order := make([]string, 0, len(deleted))
		for _, d := range deleted {
			order = append(order, d.name)
		}
		return order
	}
}

// deletion is one object's deletion event: its "kind/name" and the etcd revision of the delete.
type deletion struct {
	name     string
	revision uint64
}
