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
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/nginxconf"
)

// inlineConfigPath is the field whose syntax validateConfigSyntax checks.
var inlineConfigPath = field.NewPath("spec", "config", "inline")

// validateConfigSyntax refuses an inline nginx.conf with a syntax error (unbalanced
// braces, an unterminated quoted string, a missing ";", ...), naming the line. It judges
// the shape of statements and blocks only: directive names and arguments are nginx's to
// judge when the pods start (nginxconf). On update it runs only when the inline
// configuration changed, so an object stored before the check stays updatable
// (ratcheting, as Kubernetes' own validation does). The error never quotes the
// configuration: the line number and what is wrong are enough to find it.
func validateConfigSyntax(obj, old *operator.NginxOperator) field.ErrorList {
	inline := inlineConfig(obj)
	if inline == "" {
		return nil
	}
	if old != nil && inlineConfig(old) == inline {
		return nil
	}
	if err := nginxconf.Check(inline); err != nil {
		return field.ErrorList{field.Invalid(inlineConfigPath, field.OmitValueType{}, "nginx configuration syntax: "+err.Error())}
	}
	return nil
}

func inlineConfig(o *operator.NginxOperator) string {
	if o.Spec.Config == nil {
		return ""
	}
	return o.Spec.Config.Inline
}
