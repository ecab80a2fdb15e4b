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

package docs

// The install recipes of README.md and docs/operations.md against what the real-node suite
// (test/deploy, root only) runs. The suite cannot run the documents' commands as they are:
// it deploys images it built into a cluster without a registry or a storage provisioner,
// installs the previous release's chart to upgrade from it, and talks to a registry on
// loopback with its own CA. So each command of a block marked <!-- real-node: NAME --> is
// paired here with the lines of the suite that run its equivalent, or with why the suite
// does not. A changed command on either side fails this test until the pair is looked at
// again: the documents cannot drift from what is tested without someone saying so here.

import (
	"slices"
	"strings"
	"testing"
)

type suiteLine struct {
	file string // relative to the repository root
	text string // verbatim in file
}

type realNodeStep struct {
	block   string      // the marker's NAME
	command string      // as the documents give it, without its comment, continuations joined
	runs    []suiteLine // where the suite runs its equivalent
	notRun  string      // why the suite does not run it (then runs may show what stands for it)
}

const (
	deployToNode = "hack/deploy-to-node.sh"
	helmTest     = "test/deploy/helm_test.go"
	registryTest = "test/deploy/registry_release_test.go"
	upgradeTest  = "test/deploy/upgrade_release_test.go"
	certMgrTest  = "test/deploy/certmanager_test.go"
	olmTest      = "test/deploy/olm_test.go"
)

var realNodeSteps = []realNodeStep{
	// README's default path and docs/operations.md's "With kustomize": deploy-to-node.sh,
	// which test/deploy runs first, applies an overlay over artifacts/deploy that moves the
	// three images (and adds hostPath volumes), then the certificates, then waits.
	{block: "kustomize", command: "kubectl apply -k ../my-deploy", runs: []suiteLine{
		{"test/deploy/deploy_test.go", `stack.Script("deploy-to-node.sh", 10*time.Minute)`},
		{deployToNode, `$(realpath --relative-to="${work}" "${artifacts}/deploy")`},
		{deployToNode, `- {name: example.com/nginx-operator/nginx-exporter, newName: ${NGINX_EXPORTER_IMAGE%:*}`},
		{deployToNode, `k apply -k "${work}"`},
	}},
	{block: "kustomize", command: "hack/deploy-certs.sh", runs: []suiteLine{
		{deployToNode, `"${ROOT}/hack/deploy-certs.sh"`},
	}},
	{block: "kustomize", command: "kubectl wait --for=condition=Available --timeout=5m apiservice/v1alpha2.operator.example.com apiservice/v1alpha1.operator.example.com", runs: []suiteLine{
		{deployToNode, `k wait --for=condition=Available --timeout=5s apiservice/v1alpha2.operator.example.com apiservice/v1alpha1.operator.example.com`},
	}},

	// docs/operations.md's "With Helm": the suite installs the previous release's chart over
	// the kustomize install's volumes, in the namespace that install left.
	{block: "helm", command: "kubectl create namespace nginx-operator-system",
		notRun: "the kustomize install made the namespace, and the suite keeps it when it removes that install"},
	{block: "helm", command: "kubectl label namespace nginx-operator-system pod-security.kubernetes.io/enforce=restricted",
		notRun: "artifacts/deploy/00-namespace.yaml labelled it so", runs: []suiteLine{
			{"artifacts/deploy/00-namespace.yaml", "pod-security.kubernetes.io/enforce: restricted"},
		}},
	{block: "helm", command: "helm install nginx-operator charts/nginx-operator -n nginx-operator-system --set image.repository=registry.example.com/nginx-operator --set image.tag=v0.2.0 --set exporterImage.repository=registry.example.com/nginx-operator/nginx-exporter", runs: []suiteLine{
		{helmTest, `runHelm("install", "nginx-operator", filepath.Join(previousTree, "charts", "nginx-operator"), "--namespace", systemNS,`},
		{helmTest, `"--set", "image.repository="+repository(previousImage), "--set", "image.tag="+tag(previousImage),`},
	}},
	{block: "helm", command: "hack/deploy-certs.sh", runs: []suiteLine{
		{helmTest, `deployCerts(t)`},
		{helmTest, `exec.Command(filepath.Join(stack.RepoRoot, "hack", "deploy-certs.sh"))`},
	}},
	{block: "helm", command: "kubectl wait --for=condition=Available --timeout=5m apiservice -l app.kubernetes.io/part-of=nginx-operator", runs: []suiteLine{
		{helmTest, `mustKubectl(t, "", "wait", "--for=condition=Available", "--timeout=3m", "apiservice", "-l", partOf)`},
	}},

	// README's "From a release, with your registry": the suite cuts this tree as a release,
	// pushes it with hack/release-push.sh to a registry on loopback, verifies it there and
	// upgrades the Helm release to it.
	{block: "release", command: "cosign verify --key cosign.pub --insecure-ignore-tlog <registry>/nginx-operator@<digest of release.json>", runs: []suiteLine{
		{registryTest, `tools.cosign, "verify", "--key", key,`},
		{registryTest, `"--insecure-ignore-tlog", "--registry-cacert", ca, ref)`},
	}},
	{block: "release", command: "kubectl create ns nginx-operator-system && kubectl label ns nginx-operator-system pod-security.kubernetes.io/enforce=restricted",
		notRun: "the namespace is the kustomize install's, kept (as for the helm block)"},
	{block: "release", command: "helm install nginx-operator oci://<registry>/charts/nginx-operator --version X.Y.Z -n nginx-operator-system --set image.repository=<registry>/nginx-operator --set etcd.image.repository=<registry>/nginx-operator/etcd --set exporterImage.repository=<registry>/nginx-operator/nginx-exporter",
		notRun: "the suite upgrades the release installed from the previous chart to this chart from oci://, with the same values", runs: []suiteLine{
			{registryTest, `r.chart = "oci://" + host + "/charts/nginx-operator"`},
			{upgradeTest, `runHelm(append([]string{"upgrade", "nginx-operator"}, append(fromRegistry,`},
			{upgradeTest, `"--set", "image.repository="+strings.Split(image, "@")[0], "--set", "exporterImage.repository="+strings.Split(exporterImage, "@")[0],`},
			{upgradeTest, `"--set", "etcd.image.repository="+strings.Split(etcdImage, "@")[0],`},
		}},
	{block: "release", command: "hack/deploy-certs.sh",
		notRun: "the certificates of the earlier install stay through the upgrade", runs: []suiteLine{
			{helmTest, `deployCerts(t)`},
		}},

	// docs/operations.md's move from hack/deploy-certs.sh to cert-manager: the last step of
	// the walk, over the data of every earlier one.
	{block: "cert-manager-move", command: "kubectl -n nginx-operator-system delete secret --ignore-not-found nginx-operator-apiserver-tls nginx-operator-controller-metrics-tls nginx-operator-etcd-ca nginx-operator-etcd-server-tls nginx-operator-etcd-peer-tls nginx-operator-etcd-client-tls", runs: []suiteLine{
		{certMgrTest, `"nginx-operator-ca", "nginx-operator-apiserver-tls", "nginx-operator-controller-metrics-tls",`},
		{certMgrTest, `"nginx-operator-etcd-ca", "nginx-operator-etcd-server-tls", "nginx-operator-etcd-peer-tls", "nginx-operator-etcd-client-tls",`},
		{certMgrTest, `mustKubectl(t, "", append([]string{"delete", "secret", "-n", systemNS, "--ignore-not-found"}, certManagerSecrets...)...)`},
	}},
	{block: "cert-manager-move", command: "kubectl apply -k artifacts/overlays/cert-manager", runs: []suiteLine{
		{certMgrTest, `mustKubectl(t, "", "apply", "-k", overlayWithImages(t, "artifacts/overlays/cert-manager", refs))`},
	}},
	{block: "cert-manager-move", command: "kubectl -n nginx-operator-system wait --for=condition=Ready certificate --all", runs: []suiteLine{
		{certMgrTest, `mustKubectl(t, "", "wait", "--for=condition=Ready", "--timeout=3m", "certificate", "--all", "-n", systemNS)`},
	}},
	{block: "cert-manager-move", command: "kubectl -n nginx-operator-system delete pod -l app.kubernetes.io/name=nginx-operator-etcd", runs: []suiteLine{
		{certMgrTest, `mustKubectl(t, "", "delete", "pod", "-n", systemNS, "-l", etcdSelector, "--wait=false")`},
		{"test/deploy/etcd_helpers_test.go", `etcdSelector    = "app.kubernetes.io/name=nginx-operator-etcd"`},
	}},
	{block: "cert-manager-move", command: "kubectl -n nginx-operator-system rollout status statefulset/nginx-operator-etcd",
		notRun: "the suite waits for every member to be healthy instead", runs: []suiteLine{
			{certMgrTest, `waitForEtcdMembers(t, 3*time.Minute)`},
		}},
	{block: "cert-manager-move", command: "kubectl -n nginx-operator-system rollout restart deployment/nginx-operator-apiserver", runs: []suiteLine{
		{certMgrTest, `mustKubectl(t, "", "rollout", "restart", "-n", systemNS, "deployment/nginx-operator-apiserver")`},
	}},

	// docs/operations.md's "Through OLM": etcd first, then the bundle. The suite runs OLM's
	// olm-operator out of cluster and hands it the bundle's objects and CSV itself.
	{block: "olm", command: "kubectl apply -f artifacts/deploy/00-namespace.yaml -f artifacts/deploy/20-etcd.yaml -f artifacts/deploy/23-etcd-defrag.yaml", runs: []suiteLine{
		{olmTest, `for _, f := range []string{"00-namespace.yaml", "20-etcd.yaml", "23-etcd-defrag.yaml"} {`},
	}},
	{block: "olm", command: "hack/deploy-certs.sh --etcd-only", runs: []suiteLine{
		{olmTest, `userScript(t, 2*time.Minute, "deploy-certs.sh", "--etcd-only")`},
	}},
	{block: "olm", command: "docker build -f bundle/bundle.Dockerfile -t registry.example.com/nginx-operator-bundle:v0.2.0 bundle",
		notRun: "no bundle image: the suite applies bundle/manifests as OLM's catalog would"},
	{block: "olm", command: "docker push registry.example.com/nginx-operator-bundle:v0.2.0",
		notRun: "no bundle image (above)"},
	{block: "olm", command: "operator-sdk run bundle registry.example.com/nginx-operator-bundle:v0.2.0 -n nginx-operator-system",
		notRun: "the suite applies the bundle's objects and its ClusterServiceVersion, which OLM installs", runs: []suiteLine{
			{olmTest, `manifests := filepath.Join(stack.RepoRoot, "bundle", "manifests")`},
			{olmTest, `kc.Apply(t, 5*time.Minute, csv, "-n", systemNS, "-f", "-")`},
		}},
}

// markedCommands are the commands of the documents' blocks marked real-node: NAME, by NAME;
// blocks with the same NAME must give the same commands.
func markedCommands(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	from := map[string]string{}
	for _, d := range documents(t) {
		for _, b := range d.blocks {
			if b.marker == "" {
				continue
			}
			var cmds []string
			for _, c := range commands(&document{blocks: []fencedBlock{b}}) {
				if cmd := strings.TrimSpace(withoutComment(c.text)); cmd != "" {
					cmds = append(cmds, strings.Join(strings.Fields(cmd), " "))
				}
			}
			here := d.where(b.start)
			if prev, ok := out[b.marker]; ok && !slices.Equal(prev, cmds) {
				t.Errorf("%s: the block real-node: %s gives\n\t%s\nbut %s gives\n\t%s", here, b.marker,
					strings.Join(cmds, "\n\t"), from[b.marker], strings.Join(prev, "\n\t"))
				continue
			}
			out[b.marker], from[b.marker] = cmds, here
		}
	}
	return out
}

// TestRealNodeRunsTheInstallRecipes: every command of a marked block is a step above and
// every step's command is in its block; each suite line a step names is in its file, word
// for word, and a step the suite does not run says why.
func TestRealNodeRunsTheInstallRecipes(t *testing.T) {
	blocks := markedCommands(t)
	for _, want := range []string{"kustomize", "helm", "release", "cert-manager-move", "olm"} {
		if _, ok := blocks[want]; !ok {
			t.Errorf("no block of README.md or docs/operations.md is marked <!-- real-node: %s -->", want)
		}
	}
	steps := map[string]realNodeStep{}
	for _, s := range realNodeSteps {
		steps[s.block+"\x00"+s.command] = s
	}
	for block, cmds := range blocks {
		for _, c := range cmds {
			if _, ok := steps[block+"\x00"+c]; !ok {
				t.Errorf("the block real-node: %s has the command\n\t%s\nwhich no step of realNodeSteps pairs with the suite: add one (or fix the command)", block, c)
			}
		}
	}
	files := map[string]string{}
	run, notRun := 0, 0
	for _, s := range realNodeSteps {
		if !slices.Contains(blocks[s.block], s.command) {
			t.Errorf("the step of block %s\n\t%s\nis in no block marked real-node: %s (a command of the documents changed: update the step)", s.block, s.command, s.block)
		}
		if s.notRun == "" && len(s.runs) == 0 {
			t.Errorf("the step %q names neither the suite's lines nor why it does not run it", s.command)
		}
		if s.notRun != "" {
			notRun++
		} else {
			run++
		}
		for _, l := range s.runs {
			text, ok := files[l.file]
			if !ok {
				text = readRepoFile(t, l.file)
				files[l.file] = text
			}
			if !strings.Contains(text, l.text) {
				t.Errorf("%s no longer has\n\t%s\nwhich stood for the documents' %s step\n\t%s\n(the suite changed: check that it still runs the documents' command, and update the step)", l.file, l.text, s.block, s.command)
			}
		}
	}
	t.Logf("%d commands of %d blocks: %d run by the suite, %d not (each with its reason)", run+notRun, len(blocks), run, notRun)
}
