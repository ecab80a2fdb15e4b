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
	"regexp"
	"strings"
	"testing"
)

// execID is the ID containerd gives each exec, which its errors name.
var execID = regexp.MustCompile(`[0-9a-f]{64}`)

// TestInProcessExecAnswersAsKubectl: etcdctl in the etcd pods runs through an exec the
// tests answer in process (test/framework/kubectlexec.go); each form prints what kubectl
// exec prints, the command's exit status and the server's refusals included, and fails
// where kubectl fails.
func TestInProcessExecAnswersAsKubectl(t *testing.T) {
	need(t, etcdServes)
	pod := readyPods(t, systemNS, etcdSelector)[0]
	itself := kc
	itself.AlwaysRun = true
	for _, args := range [][]string{
		{"exec", "-n", systemNS, pod, "-c", "etcd", "--", "etcdctl", "version"},
		{"exec", pod, "-n", systemNS, "--container=etcd", "--", "etcdctl", "--command-timeout=10s", "no-such-command"},
		{"exec", "-n", systemNS, pod, "-c", "etcd", "--", "no-such-program"},
		{"exec", "-n", systemNS, "no-such-pod", "-c", "etcd", "--", "etcdctl", "version"},
		{"--as=nobody", "exec", "-n", systemNS, pod, "-c", "etcd", "--", "etcdctl", "version"},
	} {
		if !kc.InProcess(args...) {
			t.Errorf("kubectl %s is not answered in process", strings.Join(args, " "))
		}
		want, wantErr, wantFailed := itself.Run(t, "", args...)
		got, gotErr, failed := kc.Run(t, "", args...)
		wantErr, gotErr = execID.ReplaceAllString(wantErr, "ID"), execID.ReplaceAllString(gotErr, "ID")
		if got != want || gotErr != wantErr || (failed != nil) != (wantFailed != nil) {
			t.Errorf("kubectl %s\nin process: %v\n%s\nstderr: %s\nkubectl: %v\n%s\nstderr: %s",
				strings.Join(args, " "), failed, got, gotErr, wantFailed, want, wantErr)
		}
	}
}
