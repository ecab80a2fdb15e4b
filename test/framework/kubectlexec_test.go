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

package framework

import "testing"

func TestParseExec(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *execRequest // nil: kubectl itself answers
	}{
		{[]string{"exec", "-n", "ns", "etcd-0", "-c", "etcd", "--", "etcdctl", "member", "list", "-w", "json"},
			&execRequest{namespace: "ns", pod: "etcd-0", container: "etcd", command: []string{"etcdctl", "member", "list", "-w", "json"}}},
		{[]string{"--as=bob", "exec", "p", "--container=c", "--", "ls", "--", "-l"},
			&execRequest{pod: "p", container: "c", as: "bob", command: []string{"ls", "--", "-l"}}},
		// kubectl's own: input, terminals, no container named, a type, no command.
		{[]string{"exec", "-i", "p", "-c", "c", "--", "cat"}, nil},
		{[]string{"exec", "-t", "p", "-c", "c", "--", "sh"}, nil},
		{[]string{"exec", "p", "--", "ls"}, nil},
		{[]string{"exec", "deploy/d", "-c", "c", "--", "ls"}, nil},
		{[]string{"exec", "p", "-c", "c", "--"}, nil},
		{[]string{"exec", "p", "-c", "c", "ls"}, nil},
		{[]string{"get", "pods", "--", "x"}, nil},
	} {
		checkParse(t, parseExec, tc.args, tc.want)
	}
}
