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
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// padTo sets one env var whose value (no string of the spec has a limit of its own but
// spec.config.inline) makes metadata and spec exactly size bytes of JSON.
func padTo(t *testing.T, o *operator.NginxOperator, size int) {
	t.Helper()
	o.Spec.Env = []corev1.EnvVar{{Name: "PAD", Value: "x"}}
	meta, spec, err := encodedSize(o)
	if err != nil || size < meta+spec {
		t.Fatalf("cannot pad to %d bytes from %d: %v", size, meta+spec, err)
	}
	o.Spec.Env[0].Value = strings.Repeat("x", 1+size-meta-spec)
	if meta, spec, _ := encodedSize(o); meta+spec != size {
		t.Fatalf("padded to %d bytes, want %d", meta+spec, size)
	}
}

func TestSizeCap(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), nil)
	ctx := context.Background()

	atCap := sample()
	padTo(t, atCap, MaxObjectBytes)
	if errs := s.Validate(ctx, atCap); len(errs) != 0 {
		t.Fatalf("an object of exactly %d bytes is refused: %v", MaxObjectBytes, errs)
	}

	over := sample()
	padTo(t, over, MaxObjectBytes+1)
	errs := s.Validate(ctx, over)
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeTooLong || errs[0].Field != "spec" ||
		!strings.Contains(errs[0].Detail, fmt.Sprintf("%d bytes", MaxObjectBytes+1)) || !strings.Contains(errs[0].Detail, "configMapKeyRef") {
		t.Fatalf("one byte over the cap: %v; want a TooLong error on spec that gives the size and the way out", errs)
	}

	bigMeta := sample()
	// Within Kubernetes' 256 KiB of annotations, over the cap with the spec.
	bigMeta.Annotations = map[string]string{"a": strings.Repeat("x", 255*1024)}
	bigMeta.Spec.Env = []corev1.EnvVar{{Name: "A", Value: strings.Repeat("x", 4096)}}
	errs = s.Validate(ctx, bigMeta)
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeTooLong || errs[0].Field != "metadata" {
		t.Fatalf("metadata over the cap: %v; want one TooLong error on metadata", errs)
	}

	// Updates: an object stored over the cap keeps working, never grows.
	stored := over.DeepCopy()
	relabelled := stored.DeepCopy()
	relabelled.Labels = nil // smaller
	if errs := s.ValidateUpdate(ctx, relabelled, stored); len(errs) != 0 {
		t.Errorf("an update that shrinks an object over the cap is refused: %v", errs)
	}
	grown := stored.DeepCopy()
	grown.Spec.Env[0].Value += "x"
	if errs := s.ValidateUpdate(ctx, grown, stored); len(errs) != 1 || errs[0].Field != "spec" {
		t.Errorf("an update that grows an object over the cap: %v; want a TooLong error on spec", errs)
	}
	crossing := atCap.DeepCopy()
	crossing.Spec.Env[0].Value += "x"
	if errs := s.ValidateUpdate(ctx, crossing, atCap); len(errs) != 1 || errs[0].Field != "spec" {
		t.Errorf("an update over the cap: %v; want a TooLong error on spec", errs)
	}
}

// The cap is measured on the internal object; its JSON must not be smaller than the
// v1alpha2 form a client reads, and only a little larger.
func TestSizeIsMeasuredNearTheWireForm(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	o := sample()
	o.Spec.Env = []corev1.EnvVar{{Name: "A", Value: strings.Repeat("x", 1000)}}
	o.Spec.PodDisruptionBudget = &operator.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	o.Spec.Pod = &operator.PodOptions{Labels: map[string]string{"team": "web"}}
	o.Spec.Config = &operator.ConfigSource{Inline: "events {}\n"}
	o.Status = operator.NginxOperatorStatus{}
	versioned := &v1alpha2.NginxOperator{}
	if err := scheme.Convert(o, versioned, nil); err != nil {
		t.Fatal(err)
	}
	wire, err := json.Marshal(struct {
		Metadata any `json:"metadata"`
		Spec     any `json:"spec"`
	}{&versioned.ObjectMeta, &versioned.Spec})
	if err != nil {
		t.Fatal(err)
	}
	meta, spec, err := encodedSize(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("measured %d bytes; v1alpha2 metadata and spec: %d bytes", meta+spec, len(wire))
	if meta+spec < len(wire)-30 || meta+spec > len(wire)+1024 {
		t.Errorf("measured %d bytes, the v1alpha2 JSON is %d", meta+spec, len(wire))
	}
}

func TestWarnings(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), nil)
	ctx := context.Background()
	o := sample() // 2 replicas
	if w := s.WarningsOnCreate(ctx, o); len(w) != 0 {
		t.Errorf("warnings without a PodDisruptionBudget: %q", w)
	}
	o.Spec.PodDisruptionBudget = &operator.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2))}
	for name, warnings := range map[string][]string{
		"create": s.WarningsOnCreate(ctx, o),
		"update": s.WarningsOnUpdate(ctx, o, sample()),
	} {
		if len(warnings) != 1 || !strings.Contains(warnings[0], "allows no disruption") {
			t.Errorf("%s with minAvailable equal to replicas warns %q", name, warnings)
		}
	}
	if w := NewStatusStrategy(s).WarningsOnUpdate(ctx, o, sample()); len(w) != 0 {
		t.Errorf("a status write warns about the spec: %q", w)
	}
}
