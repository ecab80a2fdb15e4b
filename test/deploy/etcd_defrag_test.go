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
)

// etcdDefragCronJob runs the defragmentation CronJob of artifacts/deploy once, after the
// earlier steps' writes and the apiserver's compactions: every member's file shrinks to
// about what is in use.
func etcdDefragCronJob(t *testing.T) {
	pods := []string{etcdStatefulSet + "-0", etcdStatefulSet + "-1", etcdStatefulSet + "-2"}
	before := map[string]memberStatus{}
	for _, p := range pods {
		st, err := etcdStatus(t, p)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = st
	}
	logs, took := runJobFromCronJob(t, "nginx-operator-etcd-defrag", "defrag-now")
	t.Logf("the defragmentation job completed in %s:\n%s", took.Round(100*time.Millisecond), strings.TrimSpace(logs))
	const slack = 1 << 20
	for _, p := range pods {
		after, err := etcdStatus(t, p)
		if err != nil {
			t.Fatal(err)
		}
		b, a := before[p].Status, after.Status
		t.Logf("%s: file %s → %s (in use %s → %s)", p, mib(b.DBSize), mib(a.DBSize), mib(b.DBSizeInUse), mib(a.DBSizeInUse))
		if a.DBSize > a.DBSizeInUse+slack {
			t.Errorf("%s: after the defragmentation the file is %d bytes with %d in use", p, a.DBSize, a.DBSizeInUse)
		}
	}
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
