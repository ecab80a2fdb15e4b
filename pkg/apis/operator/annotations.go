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

package operator

// PreservedFieldsAnnotation carries, in v1alpha2 form, everything v1alpha1 cannot
// express, so that a read-modify-write through v1alpha1 loses nothing. It exists only
// on the v1alpha1 wire form (v1alpha1's conversion writes and reads it); the internal
// and stored objects never hold it, which validation enforces. Defined here, not in
// v1alpha1, because validation must not import a versioned package.
const PreservedFieldsAnnotation = "operator.example.com/v1alpha2-fields"
