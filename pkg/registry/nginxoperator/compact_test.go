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

package nginxoperator

import (
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// decodedSample is sample() with every string in storage of its own, as two objects
// decoded from etcd have them.
func decodedSample(name string) *operator.NginxOperator {
	o := sample()
	o.Name = name
	o.Namespace = strings.Clone("team-a")
	o.Spec.Image = strings.Clone(o.Spec.Image)
	o.Spec.Env = []corev1.EnvVar{{Name: strings.Clone("MODE"), Value: strings.Clone("production")}}
	o.Spec.Config = &operator.ConfigSource{Inline: strings.Repeat("events {}\n", 100)}
	o.Status.Conditions = []metav1.Condition{{Type: strings.Clone("Available"), Status: metav1.ConditionTrue, Reason: strings.Clone("MinimumReplicasAvailable"), Message: strings.Clone("2 of 2 pods ready")}}
	return o
}

func TestCompactNginxOperatorSharesRepeatedValues(t *testing.T) {
	a, b := decodedSample("one"), decodedSample("two")
	wantA := a.DeepCopy()
	compactNginxOperator(a)
	compactNginxOperator(b)
	if !apiequality.Semantic.DeepEqual(a, wantA) {
		t.Fatalf("compacting changed the object:\n%#v\n%#v", a, wantA)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for what, shared := range map[string]bool{
		"image":             same(a.Spec.Image, b.Spec.Image),
		"env value":         same(a.Spec.Env[0].Value, b.Spec.Env[0].Value),
		"inline nginx.conf": same(a.Spec.Config.Inline, b.Spec.Config.Inline),
		"condition message": same(a.Status.Conditions[0].Message, b.Status.Conditions[0].Message),
		"namespace":         same(a.Namespace, b.Namespace),
	} {
		if !shared {
			t.Errorf("%s: each object has its own copy; want one shared", what)
		}
	}
}
