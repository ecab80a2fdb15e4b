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

package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

func revision(n int64, reason v1alpha2.RevisionReason, content v1alpha2.RevisionContent, created time.Time) v1alpha2.NginxOperatorRevision {
	return v1alpha2.NginxOperatorRevision{
		ObjectMeta:    metav1.ObjectMeta{Name: "web-" + string(rune('0'+n)), CreationTimestamp: metav1.NewTime(created)},
		Revision:      n,
		NginxOperator: "web",
		Reason:        reason,
		Requester:     "alice",
		Changed:       []string{"spec.config"},
		ContentHash:   "0123456789abcdef0123",
		Content:       content,
	}
}

func TestHistoryMarksTheNewestAndSaysWhatARollbackRestored(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	inline := v1alpha2.RevisionContent{Config: &v1alpha2.ConfigSource{Inline: "events {}\n"}}
	rolled := revision(3, v1alpha2.RevisionRolledBack, inline, now.Add(-time.Minute))
	rolled.RolledBackTo = 1
	adopted := revision(1, v1alpha2.RevisionAdopted, inline, now.Add(-2*time.Hour))
	adopted.Requester = ""
	var out bytes.Buffer
	if err := writeHistory(&out, []v1alpha2.NginxOperatorRevision{adopted, revision(2, v1alpha2.RevisionUpdated, inline, now.Add(-time.Hour)), rolled}, 3, now); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"REVISION   REASON            CHANGED       REQUESTER   AGE    HASH",
		"1          Adopted           spec.config   <unknown>   120m   0123456789ab",
		"2          Updated           spec.config   alice       60m    0123456789ab",
		"3*         RolledBack to 1   spec.config   alice       60s    0123456789ab",
	}
	if got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
}

func TestDiffShowsInlineLinesAndReferencesByName(t *testing.T) {
	a := revision(1, v1alpha2.RevisionCreated, v1alpha2.RevisionContent{
		Config: &v1alpha2.ConfigSource{Inline: "events {}\nhttp {\n  server { return 200 one; }\n}\n"},
		TLS:    []v1alpha2.TLSSecret{{SecretName: "web-tls"}},
	}, time.Now())
	b := revision(2, v1alpha2.RevisionUpdated, v1alpha2.RevisionContent{
		Config: &v1alpha2.ConfigSource{Inline: "events {}\nhttp {\n  server { return 500; }\n}\n"},
		Files:  []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}},
		TLS:    []v1alpha2.TLSSecret{{SecretName: "web-tls"}},
	}, time.Now())
	text, err := diffContent(&a, &b)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"--- web-1", "+++ web-2", "-  server { return 200 one; }", "+  server { return 500; }",
		"+# spec.files[0]: ConfigMap site at /usr/share/nginx/html", " # spec.tls[0]: Secret web-tls"} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("diff lacks %q:\n%s", line, text)
		}
	}
	if same, err := diffContent(&a, &a); err != nil || same != "" {
		t.Errorf("diff of a revision with itself: %q %v", same, err)
	}
	ref := v1alpha2.RevisionContent{Config: &v1alpha2.ConfigSource{ConfigMapKeyRef: &v1alpha2.ConfigMapKeyReference{Name: "conf", Key: "nginx.conf"}}}
	if got := renderContent(&ref); got != "# spec.config: key nginx.conf of ConfigMap conf\n" {
		t.Errorf("a ConfigMap reference renders as %q", got)
	}
	if got := renderContent(&v1alpha2.RevisionContent{}); !strings.Contains(got, "none") {
		t.Errorf("no content renders as %q", got)
	}
}
