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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/warning"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/features"
)

// warnings collects what a request's warning recorder would send.
type warnings []string

func (w *warnings) AddWarning(agent, text string) { *w = append(*w, text) }

// A server emulating 0.1 (the upgrade window from 0.1 to 0.2) stores no
// spec.contentUpdate and says so; one at 0.2 stores it; a field already stored stays
// through updates that do not touch it, and through one that changes it.
func TestGatedFieldsFollowTheEmulatedRelease(t *testing.T) {
	at := func(emulated string) *nginxOperatorStrategy {
		gate := features.NewFeatureGate(utilversion.MustParseSemantic("v0.2.0"))
		if err := gate.SetEmulationVersion(utilversion.MustParseGeneric(emulated)); err != nil {
			t.Fatal(err)
		}
		s := NewStrategy(runtime.NewScheme(), gate)
		return &s
	}
	withReload := func() *operator.NginxOperator {
		o := sample()
		o.Spec.ContentUpdate = operator.ContentUpdateReload
		return o
	}
	call := func(f func(ctx context.Context)) warnings {
		var w warnings
		f(warning.WithWarningRecorder(context.Background(), &w))
		return w
	}

	o := withReload()
	w := call(func(ctx context.Context) { at("0.1").PrepareForCreate(ctx, o) })
	if o.Spec.ContentUpdate != "" || len(w) != 1 || !strings.Contains(w[0], "spec.contentUpdate was not stored") {
		t.Errorf("create emulating 0.1: contentUpdate %q, warnings %q; want it dropped with a warning", o.Spec.ContentUpdate, w)
	}
	o = withReload()
	if w := call(func(ctx context.Context) { at("0.2").PrepareForCreate(ctx, o) }); o.Spec.ContentUpdate != operator.ContentUpdateReload || len(w) != 0 {
		t.Errorf("create at 0.2: contentUpdate %q, warnings %q; want it kept silently", o.Spec.ContentUpdate, w)
	}

	o = withReload()
	if w := call(func(ctx context.Context) { at("0.1").PrepareForUpdate(ctx, o, sample()) }); o.Spec.ContentUpdate != "" || len(w) != 1 {
		t.Errorf("update adding it emulating 0.1: contentUpdate %q, warnings %q; want it dropped with a warning", o.Spec.ContentUpdate, w)
	}
	o = withReload()
	o.Spec.ContentUpdate = operator.ContentUpdateRollout
	if w := call(func(ctx context.Context) { at("0.1").PrepareForUpdate(ctx, o, withReload()) }); o.Spec.ContentUpdate != operator.ContentUpdateRollout || len(w) != 0 {
		t.Errorf("update of an object that has it, emulating 0.1: contentUpdate %q, warnings %q; want the change kept", o.Spec.ContentUpdate, w)
	}
}
