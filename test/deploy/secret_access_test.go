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

package deploy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// secretsWriter may write NginxOperators in the default namespace and read no Secret
// until a test grants it one.
const secretsWriter = "secrets-writer"

// writerReadsOnlyWhatItMay shows on the real node that a Secret's bytes leave through
// nginx only for a writer who may read it: a writer without access is refused (403, the
// field, the permission) for the Secret of a certificate and for a spec that would serve
// an Opaque Secret's directory; granted `get` on exactly the certificate's Secret, it may
// write siteTLS (the caller then proves it served). Even a writer who may read the Opaque
// Secret never gets it mounted: no Deployment, and status says why.
func writerReadsOnlyWhatItMay(t *testing.T, certSecret, siteTLS string) {
	t.Cleanup(func() {
		for _, object := range []string{"ngx/leak", "secret/db-creds", "role/" + secretsWriter, "rolebinding/" + secretsWriter,
			"role/" + secretsWriter + "-cert", "rolebinding/" + secretsWriter + "-cert"} {
			kubectl(t, "", "delete", object, "--ignore-not-found", "--wait=false")
		}
	})
	mustKubectl(t, "", "create", "role", secretsWriter, "--verb=get,list,watch,create,update,patch",
		"--resource=nginxoperators.operator.example.com")
	mustKubectl(t, "", "create", "rolebinding", secretsWriter, "--role="+secretsWriter, "--user="+secretsWriter)
	mustKubectl(t, `apiVersion: v1
kind: Secret
metadata: {name: db-creds, namespace: default}
type: Opaque
stringData: {password: do-not-serve-me}
`, "apply", "--server-side", "-f", "-")
	leak := `apiVersion: operator.example.com/v1alpha2
kind: NginxOperator
metadata: {name: leak, namespace: default}
spec:
  tls: [{secretName: db-creds}]
  config:
    inline: |
` + indent(nginxConf(`location /x/ { alias /etc/nginx/tls/db-creds/; }`), "      ") + "\n"
	asWriter := func(manifest string) (string, error) {
		_, errOut, err := kubectl(t, manifest, "apply", "-f", "-", "--as", secretsWriter)
		return errOut, err
	}
	for _, tc := range []struct{ manifest, secret string }{{leak, "db-creds"}, {siteTLS, certSecret}} {
		errOut, err := asWriter(tc.manifest)
		if want := fmt.Sprintf(`get secrets "%s"`, tc.secret); err == nil || !strings.Contains(errOut, "Forbidden") ||
			!strings.Contains(errOut, "spec.tls[0].secretName") || !strings.Contains(errOut, want) {
			t.Fatalf("a writer without access to Secret %s: %v %q, want 403 naming spec.tls[0].secretName and %s", tc.secret, err, errOut, want)
		}
	}

	mustKubectl(t, "", "create", "role", secretsWriter+"-cert", "--verb=get", "--resource=secrets", "--resource-name="+certSecret)
	mustKubectl(t, "", "create", "rolebinding", secretsWriter+"-cert", "--role="+secretsWriter+"-cert", "--user="+secretsWriter)
	// Our apiserver caches a denial for up to 10 s (--authorization-webhook-cache-unauthorized-ttl).
	took := waitFor(t, 3*time.Minute, "the writer's NginxOperator to be accepted with get on Secret "+certSecret, func() bool {
		_, err := asWriter(siteTLS)
		return err == nil
	})
	t.Logf("the writer's NginxOperator was accepted %s after the Role granting get on Secret %s", took.Round(100*time.Millisecond), certSecret)

	// Whoever writes it, an Opaque Secret is never mounted.
	mustKubectl(t, leak, "apply", "-f", "-")
	waitFor(t, 2*time.Minute, "status to say why db-creds is not mounted", func() bool {
		messages, _, _ := kubectl(t, "", "get", "ngx", "leak", "-o", "jsonpath={.status.conditions[*].message}")
		return strings.Contains(messages, "Secret db-creds is missing or not of type kubernetes.io/tls")
	})
	if _, errOut, err := kubectl(t, "", "get", "deployment", "leak"); err == nil || !strings.Contains(errOut, "NotFound") {
		t.Fatalf("a Deployment exists for an NginxOperator that mounts an Opaque Secret: %v %s", err, errOut)
	}
}
