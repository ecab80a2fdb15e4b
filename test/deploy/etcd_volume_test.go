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
	"testing"
	"time"

	"github.com/example/nginx-operator/test/framework"
)

// etcdLostVolume loses member 2's volume (claim, PersistentVolume and data) and replaces
// the member with hack/etcd-replace-member.sh under load, while a stand-in for a storage
// provisioner gives every new claim of the member an empty volume.
func etcdLostVolume(t *testing.T) {
	const member = 2
	pod := fmt.Sprintf("%s-%d", etcdStatefulSet, member)
	lost := memberVolume(member)
	claim, volume := lost.claim, lost.pv
	mustKubectl(t, "", "delete", "pvc", "-n", systemNS, claim, "--wait=false")
	mustKubectl(t, "", "delete", "pv", volume, "--wait=false")
	mustKubectl(t, "", "delete", "pod", "-n", systemNS, pod, "--wait=false")
	waitFor(t, 2*time.Minute, "the lost PersistentVolume to be gone", func() bool {
		return get(t, "get", "pv", volume, "--ignore-not-found", "-o", "name") == ""
	})
	if _, err := nodeScript(fmt.Sprintf(`rm -rf "$(volume_dir %s)"`, volume)); err != nil {
		t.Fatal(err)
	}
	t.Logf("member %d lost its volume: claim, PersistentVolume and data deleted", member)

	stop := make(chan struct{})
	provided := make(chan int)
	go func() { provided <- provisionEmptyVolumes(t, []localVolume{lost}, stop) }()
	replaced := framework.Measure(t, "etcd-member-replaced")
	load := underLoad(t, "etcd-volume-load", func() {
		start := time.Now()
		out, err := userScript(t, 12*time.Minute, "etcd-replace-member.sh", fmt.Sprint(member))
		replaced.Duration("replace-member", time.Since(start), "hack/etcd-replace-member.sh: removed, added back as a learner on a new volume, promoted")
		t.Logf("hack/etcd-replace-member.sh %d (%s):\n%s", member, time.Since(start).Round(100*time.Millisecond), out)
		if err != nil {
			t.Errorf("hack/etcd-replace-member.sh %d: %v", member, err)
		}
	})
	load.record(replaced, "load")
	close(stop)
	t.Logf("the stand-in provisioner made %d empty volumes for %s", <-provided, claim)
	waitForEtcdMembers(t, 3*time.Minute)
	for i := 0; i < 3; i++ {
		p := fmt.Sprintf("%s-%d", etcdStatefulSet, i)
		if st, err := etcdStatus(t, p); err != nil {
			t.Error(err)
		} else {
			t.Logf("%s: revision %d, database %d bytes (%d in use)", p, st.Status.Header.Revision, st.Status.DBSize, st.Status.DBSizeInUse)
		}
	}
}

// localVolume is a claim of nginx-operator-system and the hostPath PersistentVolume the
// local node gives it (hack/lib-etcd-volumes.sh).
type localVolume struct {
	claim, pv string
	make      string // the lib-etcd-volumes.sh call that prints the PersistentVolume
}

func memberVolume(member int) localVolume {
	return localVolume{fmt.Sprintf("data-%s-%d", etcdStatefulSet, member), fmt.Sprintf("%s-%d", etcdStatefulSet, member), fmt.Sprintf("member_pv %d", member)}
}

// provisionEmptyVolumes stands in for a storage provisioner: until stop is closed, whenever
// one of the claims waits for a volume, it deletes the claim's released volume and makes a
// new, empty one for it. It returns how many it made.
func provisionEmptyVolumes(t *testing.T, volumes []localVolume, stop <-chan struct{}) int {
	made := 0
	for {
		select {
		case <-stop:
			return made
		case <-time.After(time.Second):
		}
		for _, v := range volumes {
			if get(t, "get", "pvc", "-n", systemNS, v.claim, "--ignore-not-found", "-o", "jsonpath={.status.phase}") != "Pending" {
				continue
			}
			switch get(t, "get", "pv", v.pv, "--ignore-not-found", "-o", "jsonpath={.status.phase}") {
			case "Released", "Failed":
				kubectl(t, "", "delete", "pv", v.pv, "--wait=true", "--timeout=60s")
				continue
			case "":
			default:
				continue // bound to the claim, or about to be
			}
			pv, err := nodeScript(fmt.Sprintf(`rm -rf "$(volume_dir %s)"; %s`, v.pv, v.make))
			if err != nil {
				t.Errorf("making a volume for %s: %v", v.claim, err)
				continue
			}
			if _, errOut, err := kubectl(t, pv, "create", "-f", "-"); err != nil {
				t.Logf("creating the volume for %s: %s", v.claim, strings.TrimSpace(errOut))
				continue
			}
			made++
			t.Logf("made an empty volume for the waiting claim %s", v.claim)
		}
	}
}
