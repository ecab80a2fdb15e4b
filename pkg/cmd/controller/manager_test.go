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

package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCachesDropWhatIsNeverRead: the metadata of ConfigMaps and Secrets (every one of the
// cluster) and the nginx pods are cached without managed fields and annotations, which
// anyone may fill; what the controller reads stays.
func TestCachesDropWhatIsNeverRead(t *testing.T) {
	in := metadataOf("Secret")
	in.Name, in.Namespace, in.ResourceVersion = "tls", "shop", "42"
	in.Labels = map[string]string{"app": "web"}
	in.Annotations = map[string]string{"big": string(make([]byte, 256<<10))}
	in.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	in.OwnerReferences = []metav1.OwnerReference{{Kind: "NginxOperator", Name: "web", UID: "u"}}
	out, err := dropUnread(in)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.Annotations != nil || got.ManagedFields != nil {
		t.Errorf("kept annotations %d or managed fields %v", len(got.Annotations), got.ManagedFields)
	}
	if got.Name != "tls" || got.ResourceVersion != "42" || got.Labels["app"] != "web" || len(got.OwnerReferences) != 1 || got.Kind != "Secret" {
		t.Errorf("dropped what the controller reads: %+v", got)
	}
	// A tombstone or anything without metadata passes through.
	if out, err := dropUnread("not an object"); err != nil || out != "not an object" {
		t.Errorf("dropUnread(string) = %v, %v", out, err)
	}
}
