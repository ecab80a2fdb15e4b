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
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

const systemNS = "nginx-operator-system"

// The real-node suite is one test per step of the deployment path a user takes, listed
// here in the order a whole run takes them: go test runs a package's tests in the order of
// its files and, within this file, of their declarations. Each test names what it needs
// with need (fixture_test.go) and brings it up when it is not there, so that any one runs
// alone (go test -run TestEtcdBackupRestores ./deploy/); in a whole run each finds the
// system the tests before it left, and a failure fails only its own test: the next one
// that needs the system checks it and deploys it again if the failure broke it.

// TestDeploySystem: artifacts/deploy runs as real pods and the APIServices turn Available.
// In a whole run this test deploys the system that the others share.
func TestDeploySystem(t *testing.T) {
	need(t, deployed)
	runsAsDeployed(t)
}

// TestEtcdAdmitsOnlyTheAPIServer: etcd speaks TLS only and admits only the apiserver's
// client certificate.
func TestEtcdAdmitsOnlyTheAPIServer(t *testing.T) {
	need(t, deployed)
	etcdAdmitsOnlyTheAPIServer(t)
}

// TestEtcdNetworkPolicyAdmitsOnlyTheAPIServer: the etcd NetworkPolicy admits only the
// apiserver pods and etcd's peers.
func TestEtcdNetworkPolicyAdmitsOnlyTheAPIServer(t *testing.T) {
	need(t, deployed)
	etcdNetworkPolicyAdmitsOnlyTheAPIServer(t)
}

// TestServingPortsOnly: the apiserver's and the controller's NetworkPolicies open only
// their serving ports.
func TestServingPortsOnly(t *testing.T) {
	need(t, deployed)
	servingPortsOnly(t)
}

// TestControllerMetricsNeedAnAuthorizedToken: the controller's metrics need TLS and a token
// RBAC allows /metrics.
func TestControllerMetricsNeedAnAuthorizedToken(t *testing.T) {
	need(t, deployed)
	controllerMetricsNeedAnAuthorizedToken(t)
}

// TestAuditLogRecordsTheCreate: the apiservers' audit log records a create with its body
// and a get as metadata.
func TestAuditLogRecordsTheCreate(t *testing.T) {
	need(t, deployed)
	auditLogRecordsTheCreate(t)
}

// TestPrometheusBesideNginxOperators: the Prometheus Operator's Prometheus, beside
// NginxOperators as real pods.
//
// Independent parts at once: they mostly wait (scrape and evaluation intervals, pods,
// metrics-server's resolution), and none touches what another checks (each its own
// objects; the HPA's watch and counts follow its own NginxOperator only). Each part also
// runs alone, as a subtest: go test -run 'TestPrometheusBesideNginxOperators/an_HPA' ./deploy/.
func TestPrometheusBesideNginxOperators(t *testing.T) {
	need(t, deployed)
	inParallel(
		step{"the Prometheus Operator makes a Prometheus that scrapes every pod and loads the rules", func(t *testing.T) {
			need(t, prometheusImage)
			prometheusOperatorScrapes(t, images(t))
		}},
		step{"a content change reloaded in place, staged and rolled out, good and answering 500, at 4 and 20 replicas", reloadVersusRollout},
		step{"NginxOperators as real pods", inSequence(
			step{"NginxOperators become real nginx pods serving traffic", func(t *testing.T) { servesTraffic(t, images(t)["NGINX_IMAGE"]) }},
			step{"configuration, content, TLS, restricted security and failures of the nginx pods", operandOptions},
		)},
		step{"an HPA on CPU from metrics-server scales an NginxOperator through /scale", autoscalesOnCPU},
	)(t)
}

// TestBudgetKeepsOneApiserver: the PodDisruptionBudget keeps one apiserver through a drain,
// and losing the other costs no request.
func TestBudgetKeepsOneApiserver(t *testing.T) {
	need(t, deployed)
	budgetKeepsOneApiserver(t)
}

// TestEtcdRunsThreeMembers: etcd runs three members with one leader.
func TestEtcdRunsThreeMembers(t *testing.T) {
	need(t, deployed)
	etcdRunsThreeMembers(t)
}

// TestEtcdQuorumLoss: with two of three etcd members down writes fail fast; back, nothing
// is lost.
func TestEtcdQuorumLoss(t *testing.T) {
	need(t, deployed)
	etcdQuorumLoss(t)
}

// TestEtcdLostVolume: a member whose volume is lost is replaced by
// hack/etcd-replace-member.sh.
func TestEtcdLostVolume(t *testing.T) {
	need(t, deployed)
	etcdLostVolume(t)
}

// TestEtcdDefragCronJob: the defragmentation CronJob returns the space the compactions
// freed. In a whole run the earlier tests' writes and the apiserver's compactions freed
// it; on a system with less to give back, the test frees some first (etcdDefragCronJob).
func TestEtcdDefragCronJob(t *testing.T) {
	need(t, deployed)
	etcdDefragCronJob(t)
}

// TestEtcdBackupRestores: a backup restores into a fresh etcd cluster with
// hack/etcd-restore.sh.
func TestEtcdBackupRestores(t *testing.T) {
	need(t, deployed)
	etcdBackupRestores(t)
}

// TestUpgradesWithoutLoss: kubectl apply -k upgrades the previous release to this one under
// load, losing no field. It installs the previous release itself, over what runs (in a
// whole run, the system the tests before it used) or on a node without it, and leaves
// this release deployed.
func TestUpgradesWithoutLoss(t *testing.T) {
	need(t, previousRelease)
	upgradesWithoutLoss(t, images(t))
}

// TestHelmLifecycle: the previous release's Helm chart installs over the same data,
// upgrades to this one under load losing no field, rolls back and uninstalls cleanly. The
// same data is the kustomize install's, which it removes but for its volumes and Secrets.
// The release in the registry it upgrades to is waited for where the upgrade begins
// (upgradeAcrossReleases), after the install.
func TestHelmLifecycle(t *testing.T) {
	need(t, deployed, previousRelease)
	helmLifecycle(t, images(t))
}

// TestOLMInstallsTheBundle: OLM v0 installs the bundle over the same data, and deleting the
// CSV removes what it made. The same data is what a removed install kept
// (dataWithoutInstall): in a whole run, what TestHelmLifecycle's uninstall left.
func TestOLMInstallsTheBundle(t *testing.T) {
	need(t, dataWithoutInstall)
	olmInstallsTheBundle(t, images(t))
}

// TestCertManagerIssuesAndRenews: cert-manager issues every certificate over the same data
// and renews them under load. The same data is the one etcd's members serve (etcdServes):
// in a whole run, etcd as TestOLMInstallsTheBundle left it, without an apiserver.
func TestCertManagerIssuesAndRenews(t *testing.T) {
	need(t, etcdServes)
	certManagerIssuesAndRenews(t, images(t))
}

// step is one part of a test whose parts run side by side.
type step struct {
	name string
	run  func(t *testing.T)
}

// inSequence runs steps one after another, each even when one before it failed: none
// needs what another made; they share one lane beside the other parts.
func inSequence(steps ...step) func(t *testing.T) {
	return func(t *testing.T) {
		for _, s := range steps {
			t.Run(s.name, s.run)
		}
	}
}

// inParallel runs steps at the same time and returns when all are done. Each runs from a
// goroutine of its own rather than as a parallel subtest, which go test would run only
// -parallel (GOMAXPROCS, 2 here) at a time: most of their time is waiting.
func inParallel(steps ...step) func(t *testing.T) {
	return func(t *testing.T) {
		var wg sync.WaitGroup
		for _, s := range steps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(s.name, s.run)
			}()
		}
		wg.Wait()
	}
}

// deploySystem applies artifacts/deploy with hack/deploy-to-node.sh, which returns once
// every workload has rolled out and both APIServices are Available: how need brings up
// the state deployed.
func deploySystem(t *testing.T) error {
	start := time.Now()
	if out, err := stack.Script("deploy-to-node.sh", 10*time.Minute); err != nil {
		return fmt.Errorf("deploy-to-node.sh: %v\n%s", err, out)
	}
	t.Logf("deployed and APIServices Available in %s", time.Since(start).Round(time.Second))
	return nil
}

// runsAsDeployed checks that every workload runs as Ready pods and that the aggregator
// reaches them through the Service.
func runsAsDeployed(t *testing.T) {
	for _, sel := range []struct {
		label string
		want  int
	}{{"nginx-operator-etcd", 3}, {"nginx-operator-apiserver", 2}, {"nginx-operator-controller", 2}} {
		pods := readyPods(t, systemNS, "app.kubernetes.io/name="+sel.label)
		if len(pods) != sel.want {
			t.Errorf("%s: %d Ready pods, want %d", sel.label, len(pods), sel.want)
		}
	}
	logPodStartTimes(t, systemNS, "app.kubernetes.io/part-of=nginx-operator")
	// etcd and the apiserver are admitted with the cluster's critical priority.
	for _, name := range []string{"nginx-operator-etcd", "nginx-operator-apiserver"} {
		out := get(t, "get", "pods", "-n", systemNS, "-l", "app.kubernetes.io/name="+name,
			"-o", `jsonpath={range .items[*]}{.spec.priorityClassName}={.spec.priority} {end}`)
		for _, p := range strings.Fields(out) {
			if p != "system-cluster-critical=2000000000" {
				t.Errorf("%s pods run with priority %q, want system-cluster-critical=2000000000", name, out)
				break
			}
		}
	}
	// The aggregator routes through the in-cluster Service: a ClusterIP Service with the
	// apiserver pods as endpoints, not an ExternalName to localhost.
	if got := get(t, "get", "service", "-n", systemNS, "nginx-operator-apiserver", "-o", "jsonpath={.spec.type}"); got != "ClusterIP" {
		t.Errorf("the apiserver Service is %q, want ClusterIP", got)
	}
	for _, v := range []string{"v1alpha1", "v1alpha2"} {
		if got := get(t, "get", "apiservice", v+".operator.example.com", "-o", "jsonpath={.spec.service.namespace}/{.spec.service.name} {.spec.insecureSkipTLSVerify}"); got != systemNS+"/nginx-operator-apiserver " {
			t.Errorf("APIService %s: %q", v, got)
		}
	}
	mustKubectl(t, "", "get", "nginxoperators", "-A")
}

// rootSecurityContext lets a stock nginx image run as root with the runtime's capabilities
// but NET_RAW: a spec must say so, or the restricted defaults (runAsNonRoot, capabilities
// dropped) keep a root image from starting.
const rootSecurityContext = `{"runAsUser": 0, "capabilities": {"drop": ["NET_RAW"]}}`

// servesTraffic creates NginxOperators through kube-apiserver and follows their traffic
// to real nginx pods, through the ClusterIP and the NodePort, as the spec moves them.
// nginxImage is the stock (root) nginx, which listens on 80 and 8080.
func servesTraffic(t *testing.T, nginxImage string) {
	holder := get(t, "get", "lease", "-n", systemNS, "nginx-operator-controller", "-o", "jsonpath={.spec.holderIdentity}")
	if !strings.HasPrefix(holder, "nginx-operator-controller-") {
		t.Errorf("the controller Lease is held by %q, not by a controller pod", holder)
	}
	t.Cleanup(func() { kubectl(t, "", "delete", "ngx", "site", "capacity", "--ignore-not-found") })
	t.Cleanup(func() { // runs first: what the operands looked like when a wait gave up
		if t.Failed() {
			t.Logf("at the failure:\n%s\n%s", get(t, "get", "ngx,deployments,replicasets,pods", "-o", "wide"),
				get(t, "get", "ngx", "site", "capacity", "-o", "yaml"))
		}
	})
	created := time.Now()
	mustKubectl(t, fmt.Sprintf(`apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: site, namespace: default}
spec:
  image: %s
  securityContext: %s
  replicas: 2
  ports: [{name: http, containerPort: 80}]
  service: {type: NodePort, ports: [{name: http, port: 80, nodePort: 30081}]}
`, nginxImage, rootSecurityContext), "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "180s", "ngx/site")
	t.Logf("NginxOperator site Available %s after creation", time.Since(created).Round(100*time.Millisecond))
	if pods := readyPods(t, "default", "app.kubernetes.io/instance=site"); len(pods) != 2 {
		t.Errorf("site: %d Ready nginx pods, want 2", len(pods))
	}
	logPodStartTimes(t, "default", "app.kubernetes.io/instance=site")
	clusterIP := get(t, "get", "service", "site", "-o", "jsonpath={.spec.clusterIP}")
	t.Logf("ClusterIP welcome page after %s", waitForWelcome(t, clusterIP+":80").Round(100*time.Millisecond))
	t.Logf("NodePort welcome page after %s", waitForWelcome(t, nodeIP+":30081").Round(100*time.Millisecond))

	// Move nginx to its other port and the Service to other ports: the old ones go dark.
	mustKubectl(t, "", "patch", "ngx", "site", "--type", "merge", "-p",
		`{"spec":{"ports":[{"name":"http","containerPort":8080}],"service":{"ports":[{"name":"http","port":8081,"nodePort":30082}]}}}`)
	t.Logf("new ClusterIP port serves after %s", waitForWelcome(t, clusterIP+":8081").Round(100*time.Millisecond))
	t.Logf("new NodePort serves after %s", waitForWelcome(t, nodeIP+":30082").Round(100*time.Millisecond))
	waitFor(t, 3*time.Minute, "the old ports to stop serving", func() bool {
		_, errPort := httpGet(clusterIP + ":80")
		_, errNode := httpGet(nodeIP + ":30081")
		return errPort != nil && errNode != nil
	})
	if got := get(t, "get", "deployment", "site", "-o", "jsonpath={.spec.template.spec.containers[0].ports[*].containerPort}"); got != "8080" {
		t.Errorf("container ports after the move: %q", got)
	}
	// One spec change, one rollout: the original ReplicaSet and one new one.
	if rs := strings.Fields(get(t, "get", "replicasets", "-l", "app.kubernetes.io/instance=site", "-o", "name")); len(rs) != 2 {
		t.Errorf("ReplicaSets after the port move: %v, want the original and one new", rs)
	}

	// QPS mode: ceil(250/100) = 3 real pods.
	mustKubectl(t, fmt.Sprintf(`apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: capacity, namespace: default}
spec:
  image: %s
  securityContext: %s
  qps: {singlePodQPS: 100, totalQPS: 250}
`, nginxImage, rootSecurityContext), "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for", "condition=Available", "--timeout", "180s", "ngx/capacity")
	waitFor(t, 2*time.Minute, "3 Ready nginx pods for 250 QPS at 100 per pod", func() bool {
		return len(readyPods(t, "default", "app.kubernetes.io/instance=capacity")) == 3
	})
	waitFor(t, 3*time.Minute, "status.realQPS 300", func() bool {
		return get(t, "get", "ngx", "capacity", "-o", "jsonpath={.status.realQPS}") == "300"
	})
}

// readyPods lists the names of Running pods with Ready=True.
func readyPods(t *testing.T, namespace, selector string) []string {
	t.Helper()
	out := get(t, "get", "pods", "-n", namespace, "-l", selector, "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.metadata.deletionTimestamp}{"\n"}{end}`)
	var ready []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "Running" && f[2] == "True" {
			ready = append(ready, f[0])
		}
	}
	return ready
}

// logPodStartTimes prints, per pod, the time from creation to Ready.
func logPodStartTimes(t *testing.T, namespace, selector string) {
	t.Helper()
	out := get(t, "get", "pods", "-n", namespace, "-l", selector, "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.metadata.creationTimestamp} {.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\n"}{end}`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		created, err1 := time.Parse(time.RFC3339, f[1])
		ready, err2 := time.Parse(time.RFC3339, f[2])
		if err1 == nil && err2 == nil {
			t.Logf("pod %s/%s Ready %s after creation", namespace, f[0], ready.Sub(created))
		}
	}
}
