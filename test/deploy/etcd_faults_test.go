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
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// etcdRunsThreeMembers checks the cluster artifacts/deploy makes: three started voting
// members that agree on one leader, every member healthy.
func etcdRunsThreeMembers(t *testing.T) {
	waitForEtcdMembers(t, 3*time.Minute)
	leader, term := etcdLeader(t)
	t.Logf("etcd members: %v; leader %s in term %d", etcdMembers(t, leader), leader, term)
	if out, err := etcdctl(t, leader, "endpoint", "health", "--cluster"); err != nil {
		t.Error(err)
	} else {
		t.Logf("endpoint health --cluster:\n%s", strings.TrimSpace(out))
	}
}

// etcdQuorumLoss stops two of the three members: writes fail within their timeout with an
// error that says what is wrong and that a client retries (503 or 504, not 500), the
// apiservers turn unready and the APIServices unavailable; with the members back,
// everything written before is there and writes work.
func etcdQuorumLoss(t *testing.T) {
	const ns = "etcd-quorum"
	client := operatorClient(t)
	mustKubectl(t, "", "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "", "delete", "namespace", ns, "--timeout=3m") })
	nos := client.OperatorV1alpha2().NginxOperators(ns)
	var written []string
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("before-%d", i)
		if _, err := nos.Create(context.Background(), &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0))}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		written = append(written, name)
	}

	mustKubectl(t, "", "scale", "-n", systemNS, "statefulset/"+etcdStatefulSet, "--replicas=1")
	t.Cleanup(func() { kubectl(t, "", "scale", "-n", systemNS, "statefulset/"+etcdStatefulSet, "--replicas=3") })
	waitFor(t, 2*time.Minute, "members 1 and 2 gone", func() bool {
		return get(t, "get", "pods", "-n", systemNS, "-l", etcdSelector, "-o", "name") == "pod/nginx-operator-etcd-0\n"
	})

	// Writes while the quorum is lost, one after the other while the apiservers notice:
	// each gets an answer from the server, within the apiservers' own request timeout
	// (--request-timeout, 60s), before the client gives up.
	const requestTimeout = 75 * time.Second
	var (
		mu      sync.Mutex
		answers = map[string]int{}
		slowest time.Duration
		hung    int
		writes  int
	)
	writeOnce := func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		start := time.Now()
		_, err := nos.Create(ctx, &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("during-%d", i)},
			Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0))}}, metav1.CreateOptions{})
		took := time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		writes++
		slowest = max(slowest, took)
		code := 0
		if status, ok := err.(apierrors.APIStatus); ok {
			code = int(status.Status().Code)
		}
		switch {
		case err == nil:
			answers["201 Created (a write was acknowledged without a quorum)"]++
		case ctx.Err() != nil:
			hung++
		default:
			answer := fmt.Sprintf("%d %s: %s", code, apierrors.ReasonForError(err), err)
			if !retryable(err) {
				answer = "NOT RETRYABLE " + answer
			}
			answers[answer]++
		}
	}
	stopWrites := make(chan struct{})
	writesDone := make(chan struct{})
	go func() {
		defer close(writesDone)
		pace := time.NewTicker(500 * time.Millisecond) // a rate limit: two writes a second at most
		defer pace.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopWrites:
				return
			default:
			}
			writeOnce(i)
			select {
			case <-stopWrites:
				return
			case <-pace.C:
			}
		}
	}()
	d := waitFor(t, 3*time.Minute, "both apiservers unready and both APIServices unavailable", func() bool {
		available := get(t, "get", "apiservice", "v1alpha1.operator.example.com", "v1alpha2.operator.example.com",
			"-o", `jsonpath={.items[*].status.conditions[?(@.type=="Available")].status}`)
		return len(readyPods(t, systemNS, apiserverSelector)) == 0 && available == "False False"
	})
	quorum := framework.Measure(t, "etcd-quorum-loss")
	quorum.Duration("apiservices-unavailable", d, "both apiservers unready and both APIServices unavailable, after two of three members were gone")
	t.Logf("quorum lost: apiservers unready and APIServices unavailable %s after members 1 and 2 were gone", d.Round(time.Second))
	for _, name := range []string{"v1alpha1.operator.example.com", "v1alpha2.operator.example.com"} {
		t.Logf("APIService %s: %s", name, get(t, "get", "apiservice", name, "-o",
			`jsonpath={.status.conditions[?(@.type=="Available")].reason}: {.status.conditions[?(@.type=="Available")].message}`))
	}
	// With no apiserver ready, the aggregator answers at once.
	for i := 0; i < 3; i++ {
		writeOnce(1000 + i)
	}
	close(stopWrites)
	<-writesDone
	for answer, n := range answers {
		t.Logf("write without a quorum answered %d times: %s", n, answer)
		if strings.HasPrefix(answer, "201") {
			t.Errorf("%d writes were acknowledged without a quorum", n)
		}
		if strings.HasPrefix(answer, "NOT RETRYABLE") {
			t.Errorf("%d writes without a quorum got an answer a client does not retry", n)
		}
	}
	quorum.Duration("slowest-answer", slowest, "the slowest answer to a write without a quorum")
	t.Logf("%d writes, slowest answer %s (client timeout %s)", writes, slowest.Round(10*time.Millisecond), requestTimeout)
	if hung > 0 {
		t.Errorf("%d writes got no answer within %s", hung, requestTimeout)
	}

	restarted := time.Now()
	mustKubectl(t, "", "scale", "-n", systemNS, "statefulset/"+etcdStatefulSet, "--replicas=3")
	waitForEtcdMembers(t, 3*time.Minute)
	waitFor(t, 3*time.Minute, "the APIServices Available and writes accepted", func() bool {
		available := get(t, "get", "apiservice", "v1alpha1.operator.example.com", "v1alpha2.operator.example.com",
			"-o", `jsonpath={.items[*].status.conditions[?(@.type=="Available")].status}`)
		if available != "True True" {
			return false
		}
		_, err := nos.Create(context.Background(), &v1alpha2.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "after"},
			Spec: v1alpha2.NginxOperatorSpec{Replicas: ptr(int32(0))}}, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err)
	})
	quorum.Duration("writes-accepted-again", time.Since(restarted), "members back, APIServices Available and writes accepted, after the scale-up")
	t.Logf("members back, APIServices Available and writes accepted %s after the scale-up", time.Since(restarted).Round(100*time.Millisecond))
	checkAllPresent(t, client, ns, written)
}
