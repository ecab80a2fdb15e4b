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

package standalone

import (
	"net"
	"testing"
)

func TestStandalonePKIIsReusedAndFollowsTheBindAddress(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadOrCreatePKI(dir, net.ParseIP("0.0.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.serving.cert.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreatePKI(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.ca.cert.Equal(first.ca.cert) || !again.admin.cert.Equal(first.admin.cert) || !again.serving.cert.Equal(first.serving.cert) {
		t.Error("a restart must keep the CA and certificates, or the written kubeconfig stops working")
	}
	if err := again.serving.cert.CheckSignatureFrom(again.ca.cert); err != nil {
		t.Error(err)
	}
	if len(again.admin.cert.Subject.Organization) != 1 || again.admin.cert.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin certificate groups = %v", again.admin.cert.Subject.Organization)
	}

	moved, err := LoadOrCreatePKI(dir, net.ParseIP("10.1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := moved.serving.cert.VerifyHostname("10.1.2.3"); err != nil {
		t.Errorf("serving certificate after a new --bind-address: %v", err)
	}
	if !moved.ca.cert.Equal(first.ca.cert) {
		t.Error("the CA must survive a new bind address")
	}
}
