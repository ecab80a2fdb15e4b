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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

const (
	goodConf   = "events {}\nhttp {\n  server {\n    listen 80;\n  }\n}\n"
	brokenConf = "events {}\nhttp {\n  server {\n    listen 80;\n  }\n"         // the "{" of http on line 2 never closed
	otherConf  = "events {}\nhttp {\n  server {\n    listen 8080;\n  }\n}\n}\n" // one "}" too many on line 7
)

func withInline(conf string) *operator.NginxOperator {
	o := sample()
	o.Spec.Config = &operator.ConfigSource{Inline: conf}
	return o
}

// syntaxErrors are the errors of a list about spec.config.inline's syntax.
func syntaxErrors(errs field.ErrorList) field.ErrorList {
	var found field.ErrorList
	for _, e := range errs {
		if e.Field == "spec.config.inline" && strings.Contains(e.Detail, "nginx configuration syntax") {
			found = append(found, e)
		}
	}
	return found
}

func TestConfigSyntaxOnCreate(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), nil)
	ctx := context.Background()
	if errs := s.Validate(ctx, withInline(goodConf)); len(errs) != 0 {
		t.Errorf("a valid configuration was refused: %v", errs)
	}
	if errs := s.Validate(ctx, sample()); len(errs) != 0 {
		t.Errorf("no configuration was refused: %v", errs)
	}
	errs := syntaxErrors(s.Validate(ctx, withInline(brokenConf)))
	if len(errs) != 1 {
		t.Fatalf("an unbalanced brace: %v, want one error on spec.config.inline", errs)
	}
	if e := errs[0]; e.Type != field.ErrorTypeInvalid || !strings.Contains(e.Detail, "line 2: ") || !strings.Contains(e.Detail, "unbalanced braces") {
		t.Errorf("error %q, want Invalid naming line 2 and the unbalanced braces", e.Error())
	}
	if msg := errs[0].Error(); strings.Contains(msg, "listen") || len(msg) > 200 {
		t.Errorf("the error echoes the configuration or is long: %q", msg)
	}
}

func TestConfigSyntaxOnUpdateRatchets(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), nil)
	ctx := context.Background()

	// Stored before the check existed: updates that leave the configuration alone pass.
	stored := withInline(brokenConf)
	relabelled := withInline(brokenConf)
	relabelled.Labels = map[string]string{"c": "d"}
	if errs := s.ValidateUpdate(ctx, relabelled, stored); len(errs) != 0 {
		t.Errorf("an update keeping a stored broken configuration was refused: %v", errs)
	}

	// Changing it to another broken one is refused, with the new error's line.
	errs := syntaxErrors(s.ValidateUpdate(ctx, withInline(otherConf), stored))
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, `line 7: unexpected "}"`) {
		t.Errorf("an update to another broken configuration: %v, want line 7", errs)
	}

	// Breaking a valid one is refused; fixing a broken one passes.
	if errs := syntaxErrors(s.ValidateUpdate(ctx, withInline(brokenConf), withInline(goodConf))); len(errs) != 1 {
		t.Errorf("an update breaking the configuration: %v, want one error", errs)
	}
	if errs := s.ValidateUpdate(ctx, withInline(goodConf), stored); len(errs) != 0 {
		t.Errorf("an update fixing the configuration was refused: %v", errs)
	}
	// Moving from a ConfigMap to a broken inline configuration is a change.
	fromRef := sample()
	fromRef.Spec.Config = &operator.ConfigSource{ConfigMapKeyRef: &operator.ConfigMapKeyReference{Name: "conf", Key: "nginx.conf"}}
	if errs := syntaxErrors(s.ValidateUpdate(ctx, withInline(brokenConf), fromRef)); len(errs) != 1 {
		t.Errorf("an update from a ConfigMap to a broken inline configuration: %v, want one error", errs)
	}
}

// TestStatusUpdateIgnoresConfigSyntax: the controller's status writes to an object
// stored with a broken configuration keep working.
func TestStatusUpdateIgnoresConfigSyntax(t *testing.T) {
	s := NewStatusStrategy(NewStrategy(runtime.NewScheme(), nil))
	ctx := context.Background()
	stored := withInline(brokenConf)
	updated := withInline(brokenConf)
	updated.Status.ReadyReplicas = 1
	if errs := syntaxErrors(s.ValidateUpdate(ctx, updated, stored)); len(errs) != 0 {
		t.Errorf("a status update was refused for the configuration: %v", errs)
	}
}
