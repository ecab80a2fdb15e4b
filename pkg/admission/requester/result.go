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

package requester

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// changesPods reports whether an update of the spec from old to updated can change what
// the pods run or reference, or what else the spec asks of the controller. Only the
// replica count cannot: more or fewer copies of pods someone was authorized for grant
// nobody anything, so an HPA, kubectl scale or an apply of replicas is never refused for
// what another writer set. Everything else counts, since any of it may pair a new
// image, configuration or writer with references the stored object already had.
func changesPods(old, updated *operator.NginxOperatorSpec) bool {
	a, b := *old, *updated
	a.Replicas, b.Replicas = nil, nil
	a.QPS, b.QPS = nil, nil
	return !apiequality.Semantic.DeepEqual(a, b)
}
