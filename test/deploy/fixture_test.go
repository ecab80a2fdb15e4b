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
	"errors"
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// The tests share one node and what runs on it. A test names what it needs with need: a
// state of the cluster (the system deployed, the data of a removed install, etcd serving
// it) or something made once per run (an image, a release). The first test that needs a
// state brings it up, each later one checks that it is still there and brings it up again
// when a test between them took it away. A state or a build that failed is remembered:
// every later test that needs it fails at once with that error, instead of trying again.

// A prerequisite is what a test needs before it can start.
type prerequisite interface {
	ensure(t *testing.T)
}

// need makes sure of each prerequisite in turn, bringing it up or waiting for it; the test
// fails at once when one could not be had, now or earlier in the run.
func need(t *testing.T, prerequisites ...prerequisite) {
	t.Helper()
	dumpLogsOnFailure(t)
	for _, p := range prerequisites {
		p.ensure(t)
	}
}

// A state is one the cluster is in. check says why it is not there (nil when it is); bring
// brings it up, in the test that needs it, and says why it could not.
type state struct {
	failure string // what the tests that need it report when it could not be brought up
	check   func(t *testing.T) error
	bring   func(t *testing.T) error
	mu      sync.Mutex // the parts of a test that run side by side may need it at once
	failed  error
}

func (s *state) ensure(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		failFast(t, "%s: %v", s.failure, s.failed)
	}
	why := s.check(t)
	if why == nil {
		return
	}
	t.Logf("%v: bringing it up", why)
	start, returned := time.Now(), false
	defer func() {
		if !returned { // bring stopped the test: t.Fatal in a helper
			s.failed = fmt.Errorf("%s stopped while bringing it up; its log says why", t.Name())
		}
	}()
	err := s.bring(t)
	returned = true
	if err != nil {
		s.failed = err
		t.Fatalf("%s: %v", s.failure, err)
	}
	t.Logf("brought up in %s", framework.Describe(time.Since(start)))
}

// deployed: this release installed by hack/deploy-to-node.sh (artifacts/deploy with the
// backup component), etcd's three members, both apiservers and both controllers Ready and
// the APIServices Available. Most tests need it; TestDeploySystem brings it up in a whole
// run, and after a test that installed something else (or failed and broke it) the next
// test that needs it applies it again.
var deployed = &state{failure: "the system could not be deployed", check: systemRuns, bring: deploySystem}

// systemRuns says why the system is not deployed as deploySystem deploys it. An install
// that is there but not healthy (a test stopped etcd members or replaced apiserver pods,
// and they are coming back) gets three minutes before it counts as broken.
func systemRuns(t *testing.T) error {
	t.Helper()
	image := images(t)["NGINX_OPERATOR_IMAGE"]
	running := get(t, "get", "deployments", "-n", systemNS, "nginx-operator-apiserver", "nginx-operator-controller", "--ignore-not-found",
		"-o", `jsonpath={range .items[*]}{.spec.template.spec.containers[0].image} {end}`)
	switch {
	case running == "":
		return errors.New("the system is not deployed")
	case running != image+" "+image+" ":
		return fmt.Errorf("the system is not deployed: the apiserver's and the controller's Deployments run %s, not %s", running, image)
	}
	if args := get(t, "get", "deployment", "-n", systemNS, "nginx-operator-apiserver", "-o", "jsonpath={.spec.template.spec.containers[0].args}"); strings.Contains(args, "--emulated-version") {
		return errors.New("the system is not deployed: the apiserver emulates an earlier release")
	}
	if get(t, "get", "cronjob", "-n", systemNS, "nginx-operator-etcd-backup", "--ignore-not-found", "-o", "name") == "" {
		return errors.New("the system is not deployed: no backup CronJob")
	}
	var why error
	framework.Poll(3*time.Minute, 2*time.Second, func() bool {
		why = systemHealthy(t)
		return why == nil
	})
	return why
}

func systemHealthy(t *testing.T) error {
	t.Helper()
	for _, w := range []struct {
		name string
		want int
	}{{"nginx-operator-etcd", 3}, {"nginx-operator-apiserver", 2}, {"nginx-operator-controller", 2}} {
		if ready := readyPods(t, systemNS, "app.kubernetes.io/name="+w.name); len(ready) != w.want {
			return fmt.Errorf("the system is not healthy: %d Ready %s pods, want %d", len(ready), w.name, w.want)
		}
	}
	available := get(t, "get", "apiservice", "v1alpha1.operator.example.com", "v1alpha2.operator.example.com",
		"-o", `jsonpath={.items[*].status.conditions[?(@.type=="Available")].status}`)
	if available != "True True" {
		return fmt.Errorf("the system is not healthy: the APIServices' Available conditions are %q", available)
	}
	return nil
}

// dataWithoutInstall: etcd's volumes and the certificates' Secrets of an install that is
// gone (workloads, access, APIServices), as docs/operations.md says an uninstall keeps
// them: what the OLM test installs over. A whole run has it from TestHelmLifecycle's
// uninstall; alone, the system is deployed (when no volumes are there) and removed but
// for its data.
var dataWithoutInstall = &state{failure: "no install's data could be left without the install", check: onlyDataLeft, bring: func(t *testing.T) error {
	if etcdClaims(t) != 3 {
		need(t, deployed)
	}
	removeInstallKeepingData(t)
	return nil
}}

func onlyDataLeft(t *testing.T) error {
	t.Helper()
	if claims := etcdClaims(t); claims != 3 {
		return fmt.Errorf("no install left its data: %d of etcd's 3 volume claims", claims)
	}
	left := get(t, "get", "deployments,statefulsets", "-n", systemNS, "-o", "name") +
		get(t, "get", "apiservice", "v1alpha2.operator.example.com", "v1alpha1.operator.example.com", "--ignore-not-found", "-o", "name")
	if left != "" {
		return fmt.Errorf("an install runs over the data: %s", strings.Join(strings.Fields(left), ", "))
	}
	return nil
}

// etcdClaims counts the etcd members' volume claims.
func etcdClaims(t *testing.T) int {
	t.Helper()
	return strings.Count(get(t, "get", "pvc", "-n", systemNS, "-o", "name"), "persistentvolumeclaim/data-"+etcdStatefulSet+"-")
}

// etcdServes: etcd's three members Ready on their volumes, with the certificates of
// hack/deploy-certs.sh, whatever else runs: what the cert-manager test moves to
// cert-manager's certificates. A whole run has it from TestOLMInstallsTheBundle (etcd
// without an apiserver); alone, the system is deployed.
var etcdServes = &state{failure: "etcd could not be deployed", check: func(t *testing.T) error {
	if ready := readyPods(t, systemNS, etcdSelector); len(ready) != 3 {
		return fmt.Errorf("%d of etcd's 3 members Ready", len(ready))
	}
	return nil
}, bring: func(t *testing.T) error {
	need(t, deployed)
	return nil
}}

// A build is made once per run, in the background: from the start of the run when a
// selected test will need it (prefetch), else when a test first needs it. The tests that
// need it wait for it.
type build struct {
	what    string
	run     func() error
	once    sync.Once
	done    chan struct{}
	took    time.Duration
	err     error
	cleanup func()   // set by run: what finish undoes once the tests are over
	told    sync.Map // the tests that logged the wait: a test may need it twice
}

func (b *build) start() {
	b.once.Do(func() {
		b.done = make(chan struct{})
		go func() {
			defer close(b.done)
			start := time.Now()
			b.err = b.run()
			b.took = time.Since(start)
		}()
	})
}

func (b *build) ensure(t *testing.T) {
	t.Helper()
	b.start()
	start := time.Now()
	<-b.done
	if b.err != nil {
		failFast(t, "%s could not be made: %v", b.what, b.err)
	}
	if _, told := b.told.LoadOrStore(t, true); !told {
		t.Logf("%s made in %s; waited %s for it", b.what, framework.Describe(b.took), framework.Describe(time.Since(start)))
	}
}

// finish waits for a build that started and undoes what it set up beside what it made.
func (b *build) finish() {
	b.once.Do(func() {}) // nothing starts it any more
	if b.done == nil {
		return
	}
	<-b.done
	if b.cleanup != nil {
		b.cleanup()
	}
}

// prefetch starts, before the first test, what the selected tests will wait for and what
// takes minutes to make, so that it is made beside the tests that come before them. The
// Prometheus image comes first: make release, for the registry's release, holds
// hack/images/build.sh's lock for minutes.
func prefetch() {
	if selected(TestPrometheusBesideNginxOperators) {
		prometheusImage.start()
		<-prometheusImage.done
	}
	if selected(TestUpgradesWithoutLoss, TestHelmLifecycle) {
		previousRelease.start()
	}
	if selected(TestHelmLifecycle) {
		registryRelease.start()
	}
}

// finishBuilds waits for what prefetch or a test started, and stops what it runs.
func finishBuilds() {
	for _, b := range []*build{prometheusImage, &previousRelease.build, &registryRelease.build} {
		b.finish()
	}
}

// selected reports whether go test's -run and -skip flags let any of these top-level tests
// run. go test matches a top-level name against the part of each alternative of a pattern
// before its first slash; a -skip skips a top-level test only with an alternative that has
// no slash.
func selected(tests ...func(*testing.T)) bool {
	run, skip := flag.Lookup("test.run").Value.String(), flag.Lookup("test.skip").Value.String()
	for _, test := range tests {
		name := runtime.FuncForPC(reflect.ValueOf(test).Pointer()).Name()
		name = name[strings.LastIndex(name, ".")+1:]
		if (run == "" || matchesTopLevel(run, name, false)) && (skip == "" || !matchesTopLevel(skip, name, true)) {
			return true
		}
	}
	return false
}

// matchesTopLevel reports whether an alternative of pattern matches the top-level test
// name; whole takes only alternatives without lower levels. A pattern that is no regular
// expression matches: go test refuses it anyway.
func matchesTopLevel(pattern, name string, whole bool) bool {
	for _, alternative := range splitPattern(pattern, '|') {
		levels := splitPattern(alternative, '/')
		if whole && len(levels) > 1 {
			continue
		}
		if ok, err := regexp.MatchString(levels[0], name); ok || err != nil {
			return true
		}
	}
	return false
}

// splitPattern splits a -run pattern at sep outside brackets and parentheses, as go test
// does.
func splitPattern(pattern string, sep byte) []string {
	var parts []string
	brackets, parens, from := 0, 0, 0
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case c == '[':
			brackets++
		case c == ']' && brackets > 0:
			brackets--
		case c == '(' && brackets == 0:
			parens++
		case c == ')' && brackets == 0:
			parens--
		case c == sep && brackets == 0 && parens == 0:
			parts = append(parts, pattern[from:i])
			from = i + 1
		}
	}
	return append(parts, pattern[from:])
}

// dumpLogsOnFailure has a top-level test that fails print the components' last log lines
// before go test prints its report, so that a truncated log still ends with the failure;
// not when it failed for a prerequisite that had failed before it (failFast), whose first
// failure printed them.
func dumpLogsOnFailure(t *testing.T) {
	if strings.Contains(t.Name(), "/") {
		return
	}
	if _, registered := logDumps.LoadOrStore(t, false); registered {
		return
	}
	t.Cleanup(func() {
		if failedFast, _ := logDumps.Load(t); t.Failed() && failedFast != true {
			stack.DumpLogs(40)
		}
		logDumps.Delete(t)
	})
}

// logDumps holds each top-level test that dumps the logs if it fails, and whether it
// failed fast.
var logDumps sync.Map

// failFast fails the test for a prerequisite that failed before.
func failFast(t *testing.T, format string, args ...any) {
	t.Helper()
	if _, ok := logDumps.Load(t); ok {
		logDumps.Store(t, true)
	}
	t.Fatalf(format, args...)
}
