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

package integration

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
	v1alpha2client "github.com/example/nginx-operator/pkg/generated/clientset/versioned/typed/operator/v1alpha2"
	"github.com/example/nginx-operator/test/framework"
)

// previous is the previous release's apiserver (hack/previous-release), built once.
var previous struct {
	once    sync.Once
	release framework.Release
	binary  string
	err     error
}

func previousReleaseBinary(t *testing.T) (framework.Release, string) {
	t.Helper()
	previous.once.Do(func() {
		repo := filepath.Join("..", "..")
		if previous.release, previous.err = framework.PreviousRelease(repo); previous.err != nil {
			return
		}
		started := time.Now()
		previous.binary, previous.err = previous.release.Binary(repo, "./cmd/apiserver")
		t.Logf("the apiserver of %s (%s), built once and kept, ready in %s", previous.release.Version, previous.release.Commit, time.Since(started).Round(time.Second))
	})
	if previous.err != nil {
		t.Fatal(previous.err)
	}
	return previous.release, previous.binary
}

// TestUpgradeWindowLosesNoField runs this apiserver and the previous release's on one
// etcd, as a rolling upgrade does, and writes through both. A replica of the previous
// release decodes a stored object without the fields it does not know and writes it
// back without them; a status write is enough. So during the window this release
// emulates the previous one (--emulated-version) and accepts none of its new fields.
func TestUpgradeWindowLosesNoField(t *testing.T) {
	release, binary := previousReleaseBinary(t)
	emulate := "--emulated-version=nginx-operator=" + release.MajorMinor()

	// The hazard, shown so that the rest of this test is known to be able to fail: a
	// field this release stored is gone after the previous release's status write.
	t.Run("without emulation the previous release drops a new field", func(t *testing.T) {
		ctx := timeout(t)
		current := startServer(t, t.TempDir())
		old := startBinaryServerOf(t, binary, t.TempDir(), "--etcd-servers", current.EtcdURL)
		objects := current.Client.OperatorV1alpha2().NginxOperators("upgrade")
		withReload := fullObject("reload")
		withReload.Spec.ContentUpdate = v1alpha2.ContentUpdateReload
		if created := mustCreate(ctx, t, objects, withReload); created.Spec.ContentUpdate != v1alpha2.ContentUpdateReload {
			t.Fatalf("created spec.contentUpdate = %q, want Reload", created.Spec.ContentUpdate)
		}
		statusThrough(ctx, t, old.Client.OperatorV1alpha2().NginxOperators("upgrade"), "reload")
		got, err := objects.Get(ctx, "reload", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.ContentUpdate != "" {
			t.Errorf("spec.contentUpdate = %q after %s's status write; this test expects %s to drop it", got.Spec.ContentUpdate, release.Version, release.Version)
		}
	})

	t.Run("emulating the previous release nothing stored is lost", func(t *testing.T) {
		ctx := timeout(t)
		dir := t.TempDir()
		current := startServer(t, dir, emulate)
		old := startBinaryServerOf(t, binary, t.TempDir(), "--etcd-servers", current.EtcdURL)
		var warned recordedWarnings
		servers := map[string]v1alpha2client.NginxOperatorInterface{
			"current":       warningsTo(t, current, &warned).OperatorV1alpha2().NginxOperators("upgrade"),
			release.Version: old.Client.OperatorV1alpha2().NginxOperators("upgrade"),
		}

		// Created through the new replica with the new field: not stored, and said so.
		withReload := fullObject("through-current")
		withReload.Spec.ContentUpdate = v1alpha2.ContentUpdateReload
		stored := map[string]v1alpha2.NginxOperatorSpec{}
		created := mustCreate(ctx, t, servers["current"], withReload)
		if created.Spec.ContentUpdate != "" || !warned.contain("spec.contentUpdate was not stored") {
			t.Errorf("create emulating %s: spec.contentUpdate = %q, warnings %q; want it not stored, with a warning", release.Version, created.Spec.ContentUpdate, warned.texts())
		}
		stored[created.Name] = created.Spec
		// Revisions too wait for the window's end: a replica of the previous release would
		// drop status.revision on its next write.
		if created.Status.Revision != 0 {
			t.Errorf("create emulating %s recorded revision %d", release.Version, created.Status.Revision)
		}
		if _, err := servers["current"].Rollback(ctx, created.Name, &v1alpha2.NginxOperatorRollback{}, metav1.CreateOptions{}); !apierrors.IsMethodNotSupported(err) {
			t.Errorf("rollback emulating %s: %v, want 405", release.Version, err)
		}
		created = mustCreate(ctx, t, servers[release.Version], fullObject("through-previous"))
		stored[created.Name] = created.Spec

		// Every object is written by both releases, spec and status, and read back by
		// both after each write: every field of the spec as acknowledged stays.
		fields := 0
		for name, want := range stored {
			for i, writer := range []string{release.Version, "current", release.Version, "current"} {
				if i%2 == 0 {
					statusThrough(ctx, t, servers[writer], name)
				} else {
					want.Replicas = ptr.To(*want.Replicas + 1)
					scale(ctx, t, servers[writer], name, *want.Replicas)
				}
				for reader, objects := range servers {
					got, err := objects.Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					wantLeaves, gotLeaves := specLeaves(t, want), specLeaves(t, got.Spec)
					for path, value := range wantLeaves {
						if gotLeaves[path] != value {
							t.Errorf("%s after a write through %s, read through %s: %s = %s, want %s", name, writer, reader, path, gotLeaves[path], value)
						}
					}
					for path, value := range gotLeaves {
						if _, ok := wantLeaves[path]; !ok {
							t.Errorf("%s after a write through %s, read through %s: %s = %s, not acknowledged", name, writer, reader, path, value)
						}
					}
					fields += len(wantLeaves)
				}
			}
		}
		t.Logf("%d spec fields compared after writes through %s and this release", fields, release.Version)

		// The window ends: every replica runs this release, which emulates its own. The
		// new field is accepted and stays through status writes.
		old.stop()
		current.stop()
		current = startServer(t, dir)
		objects := current.Client.OperatorV1alpha2().NginxOperators("upgrade")
		got, err := objects.Get(ctx, "through-current", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Spec.ContentUpdate = v1alpha2.ContentUpdateReload
		if _, err := objects.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		statusThrough(ctx, t, objects, "through-current")
		if got, err = objects.Get(ctx, "through-current", metav1.GetOptions{}); err != nil || got.Spec.ContentUpdate != v1alpha2.ContentUpdateReload {
			t.Errorf("after the upgrade: spec.contentUpdate = %q (%v), want Reload", got.Spec.ContentUpdate, err)
		}
		// The first content change after the window records the content stored before it
		// as revision 1, so that a rollback reaches it.
		got.Spec.Config = &v1alpha2.ConfigSource{Inline: "events {}\nhttp {}\n"}
		if got, err = objects.Update(ctx, got, metav1.UpdateOptions{}); err != nil || got.Status.Revision != 2 {
			t.Fatalf("content change after the upgrade: %v, status.revision %d, want 2", err, got.Status.Revision)
		}
		first, err := current.Client.OperatorV1alpha2().NginxOperatorRevisions("upgrade").Get(ctx, "through-current-1", metav1.GetOptions{})
		if err != nil || first.Reason != v1alpha2.RevisionAdopted || first.Content.Config == nil || first.Content.Config.ConfigMapKeyRef == nil {
			t.Errorf("revision 1 after the upgrade: %+v %v, want the content stored before, Adopted", first, err)
		}
	})
}

// fullObject sets every field the previous release knows.
func fullObject(name string) *v1alpha2.NginxOperator {
	return &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "edge"}, Annotations: map[string]string{"team": "web"}},
		Spec: v1alpha2.NginxOperatorSpec{
			Image:         "registry.example.com/nginx:1.27",
			Replicas:      ptr.To[int32](2),
			Ports:         []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			ForceRedeploy: "2026-11-26",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
			Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Service: &v1alpha2.ServiceSpec{
				Type:                  v1alpha2.ServiceTypeNodePort,
				Ports:                 []v1alpha2.ServicePort{{Name: "http", Port: 80, NodePort: ptr.To[int32](30081)}},
				Labels:                map[string]string{"expose": "yes"},
				Annotations:           map[string]string{"note": "edge"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			},
			Config:          &v1alpha2.ConfigSource{ConfigMapKeyRef: &v1alpha2.ConfigMapKeyReference{Name: "site", Key: "nginx.conf"}},
			Files:           []v1alpha2.ConfigMapFiles{{ConfigMapName: "pages", MountPath: "/usr/share/nginx/html"}},
			TLS:             []v1alpha2.TLSSecret{{SecretName: "site-tls"}},
			HealthcheckPath: "/healthz",
			SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](101), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true)},
			Pod: &v1alpha2.PodOptions{
				Labels:            map[string]string{"pod": "label"},
				Annotations:       map[string]string{"pod": "annotation"},
				NodeSelector:      map[string]string{"kubernetes.io/os": "linux"},
				Tolerations:       []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}},
				PriorityClassName: "web",
				ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "pull"}},
				SecurityContext:   &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), FSGroup: ptr.To[int64](101)},
			},
			PodDisruptionBudget: &v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			Scratch:             []v1alpha2.ScratchVolume{{Name: "cache", MountPath: "/var/cache/nginx", SizeLimit: resource.MustParse("64Mi")}},
			Metrics:             &v1alpha2.MetricsSpec{Enabled: ptr.To(true)},
		},
	}
}

// statusThrough writes status as the controller does, through the server objects talk
// to, to the object as that server reads it.
func statusThrough(ctx context.Context, t *testing.T, objects v1alpha2client.NginxOperatorInterface, name string) {
	t.Helper()
	o, err := objects.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeStatus(ctx, t, objects, o, 1)
}

// scale changes the replicas through /scale, the only spec write an autoscaler makes.
func scale(ctx context.Context, t *testing.T, objects v1alpha2client.NginxOperatorInterface, name string, replicas int32) {
	t.Helper()
	s, err := objects.GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = replicas
	if _, err := objects.UpdateScale(ctx, name, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// specLeaves flattens spec into path=value pairs, one per field.
func specLeaves(t *testing.T, spec v1alpha2.NginxOperatorSpec) map[string]string {
	t.Helper()
	leaves, err := framework.JSONLeaves("spec", spec)
	if err != nil {
		t.Fatal(err)
	}
	return leaves
}

// recordedWarnings keeps the warnings a client received.
type recordedWarnings struct {
	mu   sync.Mutex
	list []string
}

func (w *recordedWarnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *recordedWarnings) texts() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

func (w *recordedWarnings) contain(s string) bool {
	for _, text := range w.texts() {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// warningsTo is s's client with its warnings recorded in w.
func warningsTo(t *testing.T, s *server, w rest.WarningHandler) *clientset.Clientset {
	t.Helper()
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = w
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// timeout is a context for one test's requests.
func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
