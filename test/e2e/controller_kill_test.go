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
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// TestControllerKilledDuringConvergence kills the controller with SIGKILL while it
// converges 200 NginxOperators and starts it again as local-up.sh did: all 200 converge,
// with exactly one Deployment and one Service each, none duplicated or orphaned.
func TestControllerKilledDuringConvergence(t *testing.T) {
	const (
		ns    = "e2e-controller-kill"
		count = 200
	)
	// Waits until the namespace is gone: while its 200 NginxOperators are being deleted the
	// controller's failed writes into the terminating namespace would count in the retry
	// counts of the tests that follow.
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--ignore-not-found", "--timeout=5m") })
	mustKubectl(t, "", "create", "namespace", ns)
	var manifest strings.Builder
	for i := range count {
		fmt.Fprintf(&manifest, "---\napiVersion: operator.example.com/v1alpha2\nkind: NginxOperator\nmetadata: {name: ngx-%03d, namespace: %s}\n", i, ns)
	}
	pidFile := filepath.Join(localDir, "pids", "nginx-operator-controller.pid")
	args, err := processArgs(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}

	// The controller converges objects about as fast as kubectl creates them: it is killed
	// while the creates still go on, once it has applied its first Deployments.
	created := make(chan error, 1)
	go func() {
		_, errOut, err := kubectl(t, manifest.String(), "create", "-f", "-")
		if err != nil {
			err = fmt.Errorf("%v: %s", err, errOut)
		}
		created <- err
	}()
	var atKill int
	waitFor(t, 2*time.Minute, "the controller to start converging", func() bool {
		atKill = len(strings.Fields(get(t, "get", "deployments", "-n", ns, "-o", "name")))
		return atKill >= 10
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Restarted like local-up.sh started it, here or, should the test stop early, at cleanup;
	// it must wait for the dead leader's Lease to expire.
	var restarted time.Time
	restart := func() {
		if !restarted.IsZero() {
			return
		}
		waitFor(t, 30*time.Second, "the killed controller to exit", func() bool { return !alive(pid) })
		proc := startDetached(t, args, "nginx-operator-controller.log")
		restarted = time.Now()
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(proc.PID())), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(restart)
	if err := <-created; err != nil {
		t.Fatalf("creating %d NginxOperators: %v", count, err)
	}
	converged := countConverged(t, ns)
	t.Logf("controller killed with %d Deployments applied; %d of %d NginxOperators converged once all were created", atKill, converged, count)
	if converged == count {
		t.Errorf("all %d NginxOperators had converged before the kill; the test did not interrupt anything", count)
	}
	restart()
	waitFor(t, 5*time.Minute, fmt.Sprintf("all %d NginxOperators to converge after the restart", count), func() bool {
		return countConverged(t, ns) == count
	})
	framework.Measure(t, "controller-killed-during-convergence").Duration("converged-after-restart", time.Since(restarted),
		fmt.Sprintf("all %d NginxOperators converged after the controller was restarted (the dead leader's Lease included)", count))
	t.Logf("all %d NginxOperators converged %s after the controller was restarted", count, time.Since(restarted).Round(100*time.Millisecond))

	operators := listNamespaced(t, "nginxoperators.operator.example.com", ns)
	uids := map[string]string{}
	for _, o := range operators {
		uids[o.Metadata.UID] = o.Metadata.Name
	}
	for _, kind := range []string{"deployments", "services"} {
		objects := listNamespaced(t, kind, ns)
		owned := map[string]int{}
		var orphans, strangers []string
		for _, o := range objects {
			owner := o.controller()
			switch {
			case owner == nil || owner.Kind != "NginxOperator":
				strangers = append(strangers, o.Metadata.Name)
			case uids[owner.UID] == "":
				orphans = append(orphans, o.Metadata.Name)
			default:
				owned[uids[owner.UID]]++
				if o.Metadata.Labels["app.kubernetes.io/managed-by"] != "nginx-operator" || owner.Name != o.Metadata.Name {
					t.Errorf("%s %s: owner %s, labels %v", kind, o.Metadata.Name, owner.Name, o.Metadata.Labels)
				}
			}
		}
		var duplicated []string
		for name, n := range owned {
			if n > 1 {
				duplicated = append(duplicated, name)
			}
		}
		t.Logf("%s in %s: %d, owned by %d distinct NginxOperators; %d orphaned, %d duplicated, %d not the controller's",
			kind, ns, len(objects), len(owned), len(orphans), len(duplicated), len(strangers))
		if len(objects) != count || len(owned) != count || len(orphans)+len(duplicated)+len(strangers) > 0 {
			t.Errorf("%s: %d objects for %d NginxOperators; orphaned %v, duplicated %v, not the controller's %v",
				kind, len(objects), count, orphans, duplicated, strangers)
		}
	}
}

type ownerReference struct {
	Kind, Name, UID string
	Controller      bool
}

type listedObject struct {
	Metadata struct {
		Name            string
		UID             string
		Generation      int64
		Labels          map[string]string
		OwnerReferences []ownerReference
	}
	Status struct {
		ObservedGeneration int64
		Conditions         []struct{ Type, Status string }
	}
}

func (o listedObject) controller() *ownerReference {
	for i := range o.Metadata.OwnerReferences {
		if o.Metadata.OwnerReferences[i].Controller {
			return &o.Metadata.OwnerReferences[i]
		}
	}
	return nil
}

func (o listedObject) condition(conditionType string) string {
	for _, c := range o.Status.Conditions {
		if c.Type == conditionType {
			return c.Status
		}
	}
	return ""
}

func listNamespaced(t *testing.T, resource, ns string) []listedObject {
	t.Helper()
	var list struct{ Items []listedObject }
	if err := json.Unmarshal([]byte(mustKubectl(t, "", "get", resource, "-n", ns, "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// countConverged counts the NginxOperators of ns whose current generation the controller
// observed, whose Deployment is Available and whose Service exists.
func countConverged(t *testing.T, ns string) int {
	t.Helper()
	services := map[string]bool{}
	for _, s := range listNamespaced(t, "services", ns) {
		services[s.Metadata.Name] = true
	}
	deployments := map[string]bool{}
	for _, d := range listNamespaced(t, "deployments", ns) {
		deployments[d.Metadata.Name] = d.condition("Available") == "True"
	}
	n := 0
	for _, o := range listNamespaced(t, "nginxoperators.operator.example.com", ns) {
		if o.Status.ObservedGeneration == o.Metadata.Generation && o.condition("Available") == "True" &&
			deployments[o.Metadata.Name] && services[o.Metadata.Name] {
			n++
		}
	}
	return n
}
