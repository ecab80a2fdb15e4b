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

package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// ValidateNginxOperatorRollback checks a rollback request posted for the NginxOperator
// called name: its metadata.name, when given, is that name, and toRevision is not negative.
func ValidateNginxOperatorRollback(rollback *operator.NginxOperatorRollback, name string) field.ErrorList {
	var allErrs field.ErrorList
	if rollback.Name != "" && rollback.Name != name {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), rollback.Name, "must be the NginxOperator's name, "+name+", or empty"))
	}
	return append(allErrs, apimachineryvalidation.ValidateNonnegativeField(rollback.ToRevision, field.NewPath("toRevision"))...)
}
