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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	"github.com/example/nginx-operator/pkg/controller/builders"
	"github.com/example/nginx-operator/pkg/controller/builders/buildertest"
)

// configMapReaders allows get on the ConfigMaps it names, and nothing else.
type configMapReaders map[string]bool

func (a configMapReaders) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if attrs.GetResource() == "configmaps" && attrs.GetVerb() == "get" && a[attrs.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// TestRenderedShowsWhatThePodsMountAndOnlyWhatTheReaderMayRead renders the Deployment the
// controller's builders make for an inline configuration with files and a certificate,
// in Reload mode: the fixed nginx.conf from the pod's annotation, the inline configuration
// from its own ConfigMap, the files' ConfigMap only to a reader allowed to get it (and a
// missing one told only to such a reader), the certificate never.
func TestRenderedShowsWhatThePodsMountAndOnlyWhatTheReaderMayRead(t *testing.T) {
	v2 := buildertest.Reloading("web", "events {}\nhttp { include /etc/nginx/nginx-operator/*.conf; }\n")
	v2.Spec.Files = []v1alpha2.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/usr/share/nginx/html"}, {ConfigMapName: "gone", MountPath: "/srv"}}
	v2.Spec.TLS = []v1alpha2.TLSSecret{{SecretName: "web-tls"}}
	applied, err := builders.DeploymentWithExporter(v2, "", "exporter:v1")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(applied)
	if err != nil {
		t.Fatal(err)
	}
	deployment := &appsv1.Deployment{}
	if err := json.Unmarshal(data, deployment); err != nil {
		t.Fatal(err)
	}
	inline := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: builders.ConfigMapName(v2), Namespace: "shop",
		OwnerReferences: []metav1.OwnerReference{{Kind: "NginxOperator", Name: "web", UID: v2.UID, Controller: ptr.To(true)}}},
		Data: map[string]string{builders.ConfigFileName: v2.Spec.Config.Inline, builders.CandidateFileName: v2.Spec.Config.Inline}}
	site := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "shop"}, Data: map[string]string{"index.html": "<h1>hunter2</h1>"}}
	no := &operator.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: v2.UID}}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "reader"})

	render := func(allowed configMapReaders) map[string]operator.RenderedFile {
		r := &RenderedREST{cluster: fake.NewClientset(inline, site), authorizer: authorizer.AuthorizerFunc(allowed.Authorize)}
		files := map[string]operator.RenderedFile{}
		for _, f := range r.files(ctx, no, deployment) {
			files[f.Path] = f
		}
		return files
	}
	describe := func(files map[string]operator.RenderedFile) string {
		var b strings.Builder
		for path, f := range files {
			fmt.Fprintf(&b, "%s: %s %q %s\n", path, f.Source, f.Content, f.Withheld)
		}
		return b.String()
	}

	files := render(configMapReaders{"site": true, "gone": true})
	// Staged (the default for an inline configuration): nginx.conf includes the file the
	// pod's include annotation names, the stable configuration on the template's pods.
	if f, include := files["/etc/nginx/nginx.conf"], files["/etc/nginx/nginx-operator/nginx-include"]; !strings.Contains(f.Content, "include /etc/nginx/nginx-operator/nginx-include;") ||
		!strings.Contains(include.Content, "include /etc/nginx/nginx-operator-config/nginx.conf;") {
		t.Errorf("nginx.conf is not Reload's fixed file:\n%s", describe(files))
	}
	if f := files["/etc/nginx/nginx-operator-config/nginx.conf"]; f.Content != v2.Spec.Config.Inline || !strings.Contains(f.Source, "ConfigMap web-nginx-conf") {
		t.Errorf("the inline configuration:\n%s", describe(files))
	}
	if f := files["/usr/share/nginx/html/index.html"]; f.Content != "<h1>hunter2</h1>" {
		t.Errorf("the files of site, to a reader who may get it:\n%s", describe(files))
	}
	if f := files["/srv"]; f.Withheld != "the ConfigMap does not exist" {
		t.Errorf("a missing ConfigMap, to a reader who may get it:\n%s", describe(files))
	}
	if f, ok := files["/etc/nginx/tls/web-tls"]; !ok || f.Content != "" || !strings.Contains(f.Withheld, "never") {
		t.Errorf("the certificate:\n%s", describe(files))
	}

	files = render(configMapReaders{})
	if f := files["/etc/nginx/nginx-operator-config/nginx.conf"]; f.Content != v2.Spec.Config.Inline {
		t.Errorf("the inline configuration is the spec's, shown to any reader:\n%s", describe(files))
	}
	for _, path := range []string{"/usr/share/nginx/html", "/srv"} {
		if f := files[path]; f.Content != "" || !strings.Contains(f.Withheld, `user "reader" may not get ConfigMap`) {
			t.Errorf("%s to a reader who may not get its ConfigMap:\n%s", path, describe(files))
		}
	}
	if strings.Contains(describe(files), "hunter2") {
		t.Errorf("a reader without ConfigMap access sees its data:\n%s", describe(files))
	}

	// Without spec.config nginx runs the image's own file.
	plain, err := builders.Deployment(buildertest.Sample("plain"), "")
	if err != nil {
		t.Fatal(err)
	}
	data, _ = json.Marshal(plain)
	deployment = &appsv1.Deployment{}
	if err := json.Unmarshal(data, deployment); err != nil {
		t.Fatal(err)
	}
	r := &RenderedREST{cluster: fake.NewClientset(), authorizer: authorizer.AuthorizerFunc(configMapReaders{}.Authorize)}
	got := r.files(ctx, &operator.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "shop"}}, deployment)
	if len(got) != 1 || got[0].Path != "/etc/nginx/nginx.conf" || got[0].Withheld != "the image's own file" {
		t.Errorf("without spec.config: %+v", got)
	}
}
