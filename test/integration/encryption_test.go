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

// Encryption at rest (docs/security.md, "Encryption at rest"): the generic apiserver's
// --encryption-provider-config encrypts NginxOperators in etcd as kube-apiserver does a
// CRD's objects, and the documented key rotation keeps every object readable.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha2"
)

// encryptionKey is one named aescbc key of an EncryptionConfiguration.
type encryptionKey struct{ name, secret string }

func newEncryptionKey(t *testing.T, name string) encryptionKey {
	t.Helper()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	return encryptionKey{name, base64.StdEncoding.EncodeToString(secret)}
}

// writeEncryptionConfig writes the EncryptionConfiguration docs/security.md shows: aescbc
// with keys in this order (the first encrypts, all decrypt) for nginxoperators only.
func writeEncryptionConfig(t *testing.T, path string, keys ...encryptionKey) string {
	t.Helper()
	return writeProviders(t, path, "aescbc: {keys: ["+keyList(keys...)+"]}")
}

func keyList(keys ...encryptionKey) string {
	var list []string
	for _, k := range keys {
		list = append(list, fmt.Sprintf("{name: %s, secret: %s}", k.name, k.secret))
	}
	return strings.Join(list, ", ")
}

// writeProviders writes an EncryptionConfiguration for nginxoperators with these providers,
// each a YAML mapping, in this order, and returns the flag that passes it.
func writeProviders(t *testing.T, path string, providers ...string) string {
	t.Helper()
	config := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n" +
		"  - resources: [nginxoperators.operator.example.com]\n    providers:\n"
	for _, p := range providers {
		config += "      - " + p + "\n"
	}
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return "--encryption-provider-config=" + path
}

// etcdOf connects to the etcd of s, an in-process server.
func etcdOf(t *testing.T, s *server) (*clientv3.Client, string) {
	t.Helper()
	client, err := etcdClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client, s.EtcdURL
}

// etcdKey is where an NginxOperator of the default namespace is stored
// (docs/storage-migration.md): the --etcd-prefix, then the group and the resource.
func etcdKey(name string) string {
	return "/registry/operator.example.com/operator.example.com/nginxoperators/" + ns + "/" + name
}

// rawValue reads the value etcd holds for the NginxOperator name, as a backup would.
func rawValue(t *testing.T, s *server, name string) []byte {
	t.Helper()
	client, _ := etcdOf(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, etcdKey(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("etcd has no key %s", etcdKey(name))
	}
	return resp.Kvs[0].Value
}

// expectEncrypted fails unless the value of name is aescbc ciphertext of key.
func expectEncrypted(t *testing.T, s *server, name, key, plaintext string) {
	t.Helper()
	expectStoredWith(t, s, name, "k8s:enc:aescbc:v1:"+key+":", plaintext)
}

// expectStoredWith fails unless the value of name starts with prefix (a provider and key)
// and holds none of the plaintext.
func expectStoredWith(t *testing.T, s *server, name, prefix, plaintext string) {
	t.Helper()
	value := rawValue(t, s, name)
	if !bytes.HasPrefix(value, []byte(prefix)) {
		t.Errorf("%s is stored as %q..., want the prefix %s", name, value[:min(len(value), 40)], prefix)
	}
	if bytes.Contains(value, []byte(plaintext)) {
		t.Errorf("%s: the value in etcd holds the plaintext %q", name, plaintext)
	}
	if bytes.Contains(value, protobufMagic) {
		t.Errorf("%s: the value in etcd holds the protobuf envelope in clear", name)
	}
}

// expectReadable fails unless name reads back through the API with its plaintext.
func expectReadable(ctx context.Context, t *testing.T, s *server, name, plaintext string) *v1alpha2.NginxOperator {
	t.Helper()
	got, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	if !strings.Contains(got.Spec.Image, plaintext) || len(got.Spec.Env) != 1 || got.Spec.Env[0].Value != plaintext {
		t.Fatalf("%s reads back as image %q env %v, want %q in both", name, got.Spec.Image, got.Spec.Env, plaintext)
	}
	return got
}

// secretObject is an NginxOperator with plaintext in its spec only: names and namespaces
// are part of etcd's keys, which are never encrypted.
func secretObject(name, plaintext string) *v1alpha2.NginxOperator {
	return &v1alpha2.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha2.NginxOperatorSpec{
			Image: "registry.example.com/" + plaintext + ":1.27",
			Env:   []corev1.EnvVar{{Name: "API_TOKEN", Value: plaintext}},
		},
	}
}

func TestEncryptionAtRest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, configDir := t.TempDir(), t.TempDir()
	config := filepath.Join(configDir, "encryption-config.yaml")
	key1, key2 := newEncryptionKey(t, "key1"), newEncryptionKey(t, "key2")
	plaintext := "plaintext-" + strings.ToLower(rand.Text())
	object := func(name string) *v1alpha2.NginxOperator { return secretObject(name, plaintext) }
	names := []string{"replaced", "applied"}

	s := startServer(t, dir, writeEncryptionConfig(t, config, key1))
	v2 := s.Client.OperatorV1alpha2().NginxOperators(ns)
	for _, name := range names {
		if _, err := v2.Create(ctx, object(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		expectReadable(ctx, t, s, name, plaintext)
		expectEncrypted(t, s, name, "key1", plaintext)
	}
	if list, err := v2.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != len(names) {
		t.Fatalf("list: %v, %v", list, err)
	}

	t.Run("a snapshot of etcd holds ciphertext only", func(t *testing.T) {
		// What the backup CronJob saves (pkg/etcdsnapshot streams the same snapshot into a file).
		client, _ := etcdOf(t, s)
		stream, err := client.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snapshot, err := io.ReadAll(stream)
		stream.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The keys are in clear, so the search does find what a snapshot holds in clear.
		if !bytes.Contains(snapshot, []byte(etcdKey(names[0]))) {
			t.Fatalf("the snapshot (%d bytes) does not hold the key %s", len(snapshot), etcdKey(names[0]))
		}
		if bytes.Contains(snapshot, []byte(plaintext)) {
			t.Errorf("the snapshot holds the plaintext %q", plaintext)
		}
		t.Logf("snapshot of %d bytes: keys in clear, values encrypted", len(snapshot))
		// Nor does any file of etcd's data directory (its database and write-ahead log).
		err = filepath.WalkDir(filepath.Join(dir, "etcd"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err == nil && bytes.Contains(data, []byte(plaintext)) {
				t.Errorf("%s holds the plaintext", path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	// The rotation of docs/security.md, one step per restart (a rollout restart of every
	// replica in a deployment).
	s.stop()
	t.Log("step 1: the new key second; it only decrypts, so no replica writes what another cannot read yet")
	s = startServer(t, dir, writeEncryptionConfig(t, config, key1, key2))
	for _, name := range names {
		expectReadable(ctx, t, s, name, plaintext)
		expectEncrypted(t, s, name, "key1", plaintext)
	}

	s.stop()
	t.Log("step 2: the new key first; new writes use it, old values still decrypt with the second")
	s = startServer(t, dir, writeEncryptionConfig(t, config, key2, key1))
	v2 = s.Client.OperatorV1alpha2().NginxOperators(ns)
	if _, err := v2.Create(ctx, object("created-after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEncrypted(t, s, "created-after", "key2", plaintext)
	names = append(names, "created-after")
	for _, name := range names[:2] {
		expectReadable(ctx, t, s, name, plaintext)
		expectEncrypted(t, s, name, "key1", plaintext) // reading rewrites nothing
	}

	t.Log("step 3: rewrite every object with unchanged content")
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range list.Items {
		before := item.ResourceVersion
		var after *v1alpha2.NginxOperator
		switch item.Name {
		case "replaced":
			// What `kubectl get nginxoperators -A -o json | kubectl replace -f -` sends: a PUT
			// of the object as read.
			after, err = v2.Update(ctx, &item, metav1.UpdateOptions{})
		case "applied":
			// What Kubernetes' storage version migrator sends: a server-side apply of nothing
			// but the identity and the resourceVersion (docs/storage-migration.md).
			body := fmt.Sprintf(`{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":%q,"uid":%q,"resourceVersion":%q}}`,
				item.Name, item.UID, item.ResourceVersion)
			after, err = v2.Patch(ctx, item.Name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "storage-version-migrator-controller"})
		default:
			continue // written with key2 already
		}
		if err != nil {
			t.Fatalf("rewriting %s: %v", item.Name, err)
		}
		// Unchanged content is written anyway because the value was read with a key that
		// is not the first: the apiserver sees it as stale.
		if after.ResourceVersion == before {
			t.Errorf("%s was not rewritten: resourceVersion still %s", item.Name, before)
		}
		expectEncrypted(t, s, item.Name, "key2", plaintext)
	}

	s.stop()
	t.Log("step 4: the old key removed")
	s = startServer(t, dir, writeEncryptionConfig(t, config, key2))
	for _, name := range names {
		expectReadable(ctx, t, s, name, plaintext)
		expectEncrypted(t, s, name, "key2", plaintext)
	}
	if list, err := s.Client.OperatorV1alpha2().NginxOperators(ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != len(names) {
		t.Fatalf("list with key2 only: %v, %v", list, err)
	}
	s.stop()

	t.Run("a server without the key refuses to read, and keeps running", func(t *testing.T) {
		s := startServer(t, dir, writeEncryptionConfig(t, config, newEncryptionKey(t, "unrelated")))
		v2 := s.Client.OperatorV1alpha2().NginxOperators(ns)
		// The storage layer's words for a value that no configured key decrypts.
		const undecryptable = "data from the storage is not transformable"
		_, err := v2.Get(ctx, names[0], metav1.GetOptions{})
		t.Logf("get: %v", err)
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), undecryptable) || !strings.Contains(err.Error(), "no matching key was found") {
			t.Errorf("get without the key: %v, want an internal error saying no key decrypts it", err)
		}
		// A list is served from the watch cache, which cannot fill: 429 with the same reason
		// (read once here; client-go would retry it ten times).
		resp, err := s.httpClient(false).Get(s.URL("/apis/operator.example.com/v1alpha2/namespaces/" + ns + "/nginxoperators"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("list: %d %s", resp.StatusCode, body)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), undecryptable) {
			t.Errorf("list without the key: %d %s, want 429 saying no key decrypts the objects", resp.StatusCode, body)
		}
		// An object whose key is lost for good can only be deleted, by a user allowed the
		// verb unsafe-delete-ignore-read-errors (AllowUnsafeMalformedObjectDeletion).
		unsafe := true
		if err := v2.Delete(ctx, names[0], metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &unsafe}); err != nil {
			t.Errorf("unsafe delete of an object no key decrypts: %v", err)
		} else if _, err := v2.Get(ctx, names[0], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after the unsafe delete: %v, want NotFound", err)
		}
		resp, err = s.httpClient(false).Get(s.URL("/healthz"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !s.Running() {
			t.Errorf("after the failed reads: /healthz %d, running %v", resp.StatusCode, s.Running())
		}
		if n := s.panics(); n != 0 {
			t.Errorf("the apiserver recovered from %d panics (their stacks are in the test's output)", n)
		}
	})
}

// TestEncryptionEnabledOnExistingData turns encryption on for objects stored in clear, as
// docs/operations.md describes (identity last, then a rewrite), and then moves from one
// provider to another the same way: secretbox, then aesgcm.
func TestEncryptionEnabledOnExistingData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, config := t.TempDir(), filepath.Join(t.TempDir(), "encryption-config.yaml")
	plaintext := "plaintext-" + strings.ToLower(rand.Text())
	boxKey, gcmKey := newEncryptionKey(t, "box1"), newEncryptionKey(t, "gcm1")
	secretbox := "secretbox: {keys: [" + keyList(boxKey) + "]}"
	aesgcm := "aesgcm: {keys: [" + keyList(gcmKey) + "]}"

	s := startServer(t, dir)
	if _, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Create(ctx, secretObject("old", plaintext), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if value := rawValue(t, s, "old"); !bytes.Contains(value, []byte(plaintext)) {
		t.Fatalf("without encryption the value does not hold the plaintext: %q", value)
	}

	// rewrite PUTs every object as read, as kubectl replace does, and checks how each is
	// then stored.
	rewrite := func(s *server, prefix string) {
		t.Helper()
		v2 := s.Client.OperatorV1alpha2().NginxOperators(ns)
		list, err := v2.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			if _, err := v2.Update(ctx, &item, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("rewriting %s: %v", item.Name, err)
			}
			expectReadable(ctx, t, s, item.Name, plaintext)
			expectStoredWith(t, s, item.Name, prefix, plaintext)
		}
	}

	for _, step := range []struct {
		what      string
		providers []string
		prefix    string
	}{
		{"secretbox first, identity last to read what was stored in clear", []string{secretbox, "identity: {}"}, "k8s:enc:secretbox:v1:box1:"},
		{"aesgcm first, secretbox second", []string{aesgcm, secretbox}, "k8s:enc:aesgcm:v1:gcm1:"},
	} {
		s.stop()
		t.Log(step.what)
		s = startServer(t, dir, writeProviders(t, config, step.providers...))
		expectReadable(ctx, t, s, "old", plaintext)
		name := "new-" + strings.Split(step.prefix, ":")[2]
		if _, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Create(ctx, secretObject(name, plaintext), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rewrite(s, step.prefix)
	}

	s.stop()
	t.Log("aesgcm only")
	s = startServer(t, dir, writeProviders(t, config, aesgcm))
	for _, name := range []string{"old", "new-secretbox", "new-aesgcm"} {
		expectReadable(ctx, t, s, name, plaintext)
		expectStoredWith(t, s, name, "k8s:enc:aesgcm:v1:gcm1:", plaintext)
	}
}
