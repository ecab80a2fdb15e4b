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

// Command kubectl-nginx is the kubectl plugin of nginx-operator: "kubectl nginx history",
// "diff", "rollback" and "rendered". Install it from a clone with
// "go -C cmd/kubectl-nginx install .", or put bin/kubectl-nginx (make build) on PATH. It is a
// module of its own: the servers need none of cli-runtime's dependencies.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/nginx-operator/cmd/kubectl-nginx/plugin"
)

func main() {
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
