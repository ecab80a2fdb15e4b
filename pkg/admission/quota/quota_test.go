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

package quota

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// quotaFor is a ResourceQuota of namespace team-a whose status kube-controller-manager
// has computed: at most hard NginxOperators, used of them exist.
func quotaFor(hard, used int64) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "objects", ResourceVersion: "1"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{ResourceName: *resource.NewQuantity(hard, resource.DecimalSI)}},
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{ResourceName: *resource.NewQuantity(hard, resource.DecimalSI)},
			Used: corev1.ResourceList{ResourceName: *resource.NewQuantity(used, resource.DecimalSI)},
		},
	}
}

// newPlugin is kube's ResourceQuota plugin initialized as the server does it: the generic
// initializer, then ours; its ResourceQuota informer is synced.
func newPlugin(t *testing.T, objects ...*corev1.ResourceQuota) (admission.ValidationInterface, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	for _, q := range objects {
		if err := client.Tracker().Add(q); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	plugin, err := resourcequota.NewResourceQuota(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	genericinitializer.New(client, nil, factory, nil, nil, nil, stop, nil).Initialize(plugin)
	ours, err := NewInitializer(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ours.Initialize(plugin)
	if err := plugin.ValidateInitialization(); err != nil {
		t.Fatalf("the plugin is not fully initialized: %v", err)
	}
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	return plugin, client
}

func create(namespace, name string) admission.Attributes {
	object := &operator.NginxOperator{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	return admission.NewAttributesRecord(object, nil, operator.Kind("NginxOperator").WithVersion(""), namespace, name,
		operator.Resource("nginxoperators").WithVersion(""), "", admission.Create, &metav1.CreateOptions{}, false,
		&user.DefaultInfo{Name: "alice"})
}

func TestResourceName(t *testing.T) {
	if ResourceName != "count/nginxoperators.operator.example.com" {
		t.Fatalf("ResourceName = %q", ResourceName)
	}
}

func TestACreateBeyondTheQuotaIsForbiddenWithKubesMessage(t *testing.T) {
	plugin, client := newPlugin(t, quotaFor(2, 2))
	err := plugin.Validate(context.Background(), create("team-a", "third"), nil)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403 Forbidden, got %v", err)
	}
	want := "exceeded quota: objects, requested: count/nginxoperators.operator.example.com=1, " +
		"used: count/nginxoperators.operator.example.com=2, limited: count/nginxoperators.operator.example.com=2"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q lacks %q", err, want)
	}
	for _, action := range client.Actions() {
		if action.GetVerb() == "update" {
			t.Fatalf("a refused create was charged: %v", action)
		}
	}
}

func TestACreateWithinTheQuotaIsChargedToItsStatus(t *testing.T) {
	plugin, client := newPlugin(t, quotaFor(2, 1))
	if err := plugin.Validate(context.Background(), create("team-a", "second"), nil); err != nil {
		t.Fatalf("a create within the quota was refused: %v", err)
	}
	var charged *corev1.ResourceQuota
	for _, action := range client.Actions() {
		if update, ok := action.(clienttesting.UpdateAction); ok && action.GetSubresource() == "status" {
			charged = update.GetObject().(*corev1.ResourceQuota)
		}
	}
	if charged == nil {
		t.Fatalf("no status update of the quota among %v", client.Actions())
	}
	if used := charged.Status.Used[ResourceName]; used.Value() != 2 {
		t.Fatalf("status.used = %s after the create, want 2", used.String())
	}
}

func TestOtherNamespacesAreNotCounted(t *testing.T) {
	plugin, _ := newPlugin(t, quotaFor(1, 1))
	if err := plugin.Validate(context.Background(), create("team-b", "web"), nil); err != nil {
		t.Fatalf("a quota of team-a refused a create in team-b: %v", err)
	}
}
