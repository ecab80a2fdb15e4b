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

// Package trust proves, for every field of the NginxOperator spec in both versions, the
// property docs/security.md promises: after any write by a user, everything the resulting
// pods get, that user may get. A field is either refused at admission unless its writer
// holds the permission its row of the rule table names, or it is inert: set by a writer who
// holds nothing but NginxOperator rights, the pods stay within the restricted Pod Security
// profile and gain no reference, identity, placement, label or annotation. A field that is
// not in the table fails the test until someone decides its rule.
package trust
