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

package trust

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/example/nginx-operator/pkg/admission/requester"
	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/install"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/apis/operator/validation"
)

// nothing is the writer who holds NginxOperator rights and no other permission.
type nothing struct{}

func (nothing) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "", nil
}

// outcome is what became of one write.
type outcome struct {
	invalid  bool   // validation refused it: nothing is stored
	refused  string // the requester check refused it, with this message
	children children
	object   *v1alpha2.NginxOperator
}

// write runs a versioned object through the server's path (defaulting, conversion,
// validation, the requester check as a writer with NginxOperator rights alone) and
// what the controller builds of it as it reads it back.
func write(t *testing.T, scheme *runtime.Scheme, obj runtime.Object) outcome {
	t.Helper()
	scheme.Default(obj)
	internal := &operator.NginxOperator{}
	if err := scheme.Convert(obj, internal, nil); err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	internal.Name, internal.Namespace, internal.UID = "web", "team", "uid-1"
	if errs := validation.ValidateNginxOperator(internal); len(errs) > 0 {
		return outcome{invalid: true}
	}
	plugin := requester.New()
	plugin.SetUnconditionalAuthorizer(nothing{})
	attrs := admission.NewAttributesRecord(internal, nil, operator.Kind("NginxOperator").WithVersion(""), "team", "web",
		operator.Resource("nginxoperators").WithVersion(""), "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "writer"})
	if err := plugin.Validate(context.Background(), attrs, nil); err != nil {
		return outcome{refused: err.Error()}
	}
	stored := &v1alpha2.NginxOperator{}
	if err := scheme.Convert(internal, stored, nil); err != nil {
		t.Fatalf("converting back: %v", err)
	}
	scheme.Default(stored) // as every read from storage
	c, err := build(stored)
	if err != nil {
		t.Fatalf("building the children: %v", err)
	}
	return outcome{children: c, object: stored}
}

// specOf returns a pointer to the spec of a versioned object.
func specOf(obj runtime.Object) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").Addr().Interface()
}

// TestEverySpecFieldIsClassified walks both versions' spec, field by field: each must be
// in docs/security.md's rule table, and every value tried in it must either be refused
// (403 naming a permission its row names) or leave the pods within the restricted profile
// and give them nothing the same NginxOperator without it lacks.
func TestEverySpecFieldIsClassified(t *testing.T) {
	rules := readRules(t)
	scheme := runtime.NewScheme()
	install.Install(scheme)

	baselines := map[string]func() runtime.Object{
		"v1alpha2 default image": func() runtime.Object { return &v1alpha2.NginxOperator{} },
		"v1alpha2 image nginx:1": func() runtime.Object {
			return &v1alpha2.NginxOperator{Spec: v1alpha2.NginxOperatorSpec{Image: "nginx:1"}}
		},
		"v1alpha1": func() runtime.Object { return &v1alpha1.NginxOperator{} },
	}
	var unclassified, holes []string
	tried, refused, inert := 0, 0, 0
	for _, name := range []string{"v1alpha2 default image", "v1alpha2 image nginx:1", "v1alpha1"} {
		newObj := baselines[name]
		base := write(t, scheme, newObj())
		if base.invalid || base.refused != "" {
			t.Fatalf("%s: the plain object is not accepted: %+v", name, base)
		}
		if beyond := beyondRestricted(base.children.pod); len(beyond) > 0 {
			t.Errorf("%s: a writer who says nothing gets pods beyond the restricted profile: %s", name, strings.Join(beyond, "; "))
		}
		baseGrants := grants(base.object, base.children)
		if len(baseGrants) > 0 {
			t.Errorf("%s: a writer who says nothing gets %v", name, baseGrants)
		}
		for _, l := range leaves(reflect.TypeOf(specOf(newObj())).Elem()) {
			rows := covering(rules, l.path)
			if len(rows) == 0 {
				if !slices.Contains(unclassified, l.path) {
					unclassified = append(unclassified, l.path)
				}
				continue
			}
			var needs []string
			for _, r := range rows {
				needs = append(needs, r.needs...)
			}
			for _, value := range candidates(l.typ) {
				obj := newObj()
				set(specOf(obj), l, value)
				got := write(t, scheme, obj)
				tried++
				switch {
				case got.invalid:
				case got.refused != "":
					refused++
					if !namesOneOf(got.refused, needs) {
						holes = append(holes, fmt.Sprintf("%s: %s = %v is refused for a permission its row (%v) does not name: %s", name, l.path, value, needs, got.refused))
					}
				default:
					inert++
					beyond := beyondRestricted(got.children.pod)
					extra := difference(grants(got.object, got.children), baseGrants)
					if len(beyond) > 0 || len(extra) > 0 {
						holes = append(holes, fmt.Sprintf("%s: %s = %v, set with NginxOperator rights alone, gives the pods %v beyond the restricted profile and %v", name, l.path, value, beyond, extra))
					}
				}
			}
		}
	}
	t.Logf("%d values tried in the fields of both versions: %d refused without their permission, %d accepted and inert, the rest invalid", tried, refused, inert)
	if len(unclassified) > 0 {
		t.Errorf("spec fields not in %s's rule table (decide who may set them, add a row):\n  %s", securityDoc, strings.Join(unclassified, "\n  "))
	}
	if len(holes) > 0 {
		t.Errorf("%d writes grant what the writer lacks:\n  %s", len(holes), strings.Join(holes, "\n  "))
	}
}

func namesOneOf(message string, needs []string) bool {
	for _, n := range needs {
		if strings.Contains(message, "needs permission to "+n) {
			return true
		}
	}
	return false
}

func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
