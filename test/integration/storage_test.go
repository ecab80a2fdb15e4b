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
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator/v1alpha1"
	clientset "github.com/example/nginx-operator/pkg/generated/clientset/versioned"
)

// etcdClient connects to the etcd of s, an in-process server; the caller closes it.
func etcdClient(s *server) (*clientv3.Client, error) {
	if s.EtcdURL == "" {
		return nil, fmt.Errorf("the apiserver on port %d runs the binary, whose embedded etcd is its own", s.Port)
	}
	return clientv3.New(clientv3.Config{Endpoints: []string{s.EtcdURL}, DialTimeout: 10 * time.Second})
}

// storedObjects reads the raw NginxOperator values from the server's etcd, by name.
func storedObjects(t testing.TB, s *server) map[string][]byte {
	t.Helper()
	client, err := etcdClient(s)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{}
	for _, kv := range resp.Kvs {
		if key := string(kv.Key); strings.Contains(key, "/nginxoperators/") {
			objects[key[strings.LastIndex(key, "/")+1:]] = kv.Value
		}
	}
	return objects
}

// storedAs names the encoding of a raw etcd value.
func storedAs(value []byte) string {
	switch {
	case bytes.HasPrefix(value, protobufMagic):
		return "protobuf"
	case bytes.HasPrefix(value, []byte("{")):
		return "json"
	}
	return fmt.Sprintf("unknown %q", value)
}

var protobufMagic = []byte("k8s\x00")

func TestStorageMediaType(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "protobuf"},
		{[]string{"--storage-media-type=application/json"}, "json"},
		{[]string{"--storage-media-type=application/vnd.kubernetes.protobuf"}, "protobuf"},
	} {
		t.Run(strings.Join(append([]string{"default"}, tc.args...), " "), func(t *testing.T) {
			s := startServer(t, t.TempDir(), tc.args...)
			if _, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Create(context.Background(), richObject("stored"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := storedAs(storedObjects(t, s)["stored"]); got != tc.want {
				t.Errorf("stored as %s, want %s", got, tc.want)
			}
		})
	}
}

// TestJSONStoredObjectsStayReadable writes objects the old way (JSON in etcd), restarts
// with the protobuf default on the same data and reads, lists, watches, updates and
// deletes them.
func TestJSONStoredObjectsStayReadable(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	old := startServer(t, dir, "--storage-media-type=application/json")
	oldV2, oldV1 := old.Client.OperatorV1alpha2().NginxOperators(ns), old.Client.OperatorV1alpha1().NginxOperators(ns)
	rich, err := oldV2.Create(ctx, richObject("rich"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rich.Status.Selector = "app=rich"
	if _, err := oldV2.UpdateStatus(ctx, rich, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"legacy", "doomed"} {
		if _, err := oldV1.Create(ctx, &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.NginxOperatorSpec{Port: ptr.To[int32](8080), Replicas: ptr.To[int32](3)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, value := range storedObjects(t, old) {
		if storedAs(value) != "json" {
			t.Fatalf("%s stored as %s before the restart", name, storedAs(value))
		}
	}
	old.stop()

	s := startServer(t, dir)
	v2, v1 := s.Client.OperatorV1alpha2().NginxOperators(ns), s.Client.OperatorV1alpha1().NginxOperators(ns)
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("v1alpha2 list after the restart: %v %v", list, err)
	}
	if oldList, err := v1.List(ctx, metav1.ListOptions{}); err != nil || len(oldList.Items) != 3 {
		t.Fatalf("v1alpha1 list after the restart: %v %v", oldList, err)
	}
	got, err := v2.Get(ctx, "rich", metav1.GetOptions{})
	if err != nil || got.Spec.Image != "nginx:1.25" || len(got.Spec.Ports) != 2 || got.Status.Selector != "app=rich" {
		t.Fatalf("rich after the restart: %v %+v", err, got)
	}
	legacy, err := v1.Get(ctx, "legacy", metav1.GetOptions{})
	if err != nil || *legacy.Spec.Port != 8080 || *legacy.Spec.Replicas != 3 {
		t.Fatalf("legacy after the restart: %v %+v", err, legacy)
	}
	if stored := storedObjects(t, s); storedAs(stored["rich"]) != "json" || storedAs(stored["legacy"]) != "json" {
		t.Fatalf("reading rewrote the stored objects: %s %s", storedAs(stored["rich"]), storedAs(stored["legacy"]))
	}

	w, err := v2.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got.Spec.ForceRedeploy = "after-restart"
	if _, err := v2.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update of a JSON-stored object through v1alpha2: %v", err)
	}
	legacy.Spec.ForceRedploy = "after-restart"
	if _, err := v1.Update(ctx, legacy, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update of a JSON-stored object through v1alpha1: %v", err)
	}
	if err := v1.Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete of a JSON-stored object: %v", err)
	}
	var events []string
	for len(events) < 3 {
		select {
		case ev := <-w.ResultChan():
			obj, _ := ev.Object.(metav1.Object)
			if obj == nil {
				t.Fatalf("watch: %s %+v", ev.Type, ev.Object)
			}
			events = append(events, fmt.Sprintf("%s %s", ev.Type, obj.GetName()))
		case <-ctx.Done():
			t.Fatalf("watch events so far: %v", events)
		}
	}
	if want := []string{string(watch.Modified) + " rich", string(watch.Modified) + " legacy", string(watch.Deleted) + " doomed"}; fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("watch events %v, want %v", events, want)
	}

	stored := storedObjects(t, s)
	if storedAs(stored["rich"]) != "protobuf" || storedAs(stored["legacy"]) != "protobuf" || stored["doomed"] != nil {
		t.Errorf("after the writes: rich %s, legacy %s, doomed %d bytes", storedAs(stored["rich"]), storedAs(stored["legacy"]), len(stored["doomed"]))
	}
	if got, err := v2.Get(ctx, "rich", metav1.GetOptions{}); err != nil || got.Spec.ForceRedeploy != "after-restart" || got.Status.Selector != "app=rich" {
		t.Errorf("rich after its update: %v %+v", err, got)
	}
}

// BenchmarkStorageMediaType compares JSON and protobuf in etcd: bytes per stored object,
// creates per second (concurrent clients) and the time to list the objects. Clients
// speak protobuf in both cases, so only the storage encoding differs.
//
//	go test ./test/integration -run '^$' -bench StorageMediaType -benchtime 1000x -timeout 30m
func BenchmarkStorageMediaType(b *testing.B) {
	for _, mediaType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		b.Run(mediaType[strings.LastIndex(mediaType, "/")+1:], func(b *testing.B) {
			s := startServer(b, b.TempDir(), "--storage-media-type="+mediaType)
			// Unthrottled: client-go's default 5 requests/s would be all the benchmark measured.
			cfg := rest.CopyConfig(s.Config)
			cfg.QPS, cfg.Burst = -1, 0
			c, err := clientset.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			objects := c.OperatorV1alpha2().NginxOperators(ns)
			var created atomic.Int64
			b.Run("create", func(b *testing.B) {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						name := fmt.Sprintf("bench-%d", created.Add(1))
						if _, err := objects.Create(context.Background(), richObject(name), metav1.CreateOptions{}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
			})
			stored := storedObjects(b, s)
			total := 0
			for _, value := range stored {
				total += len(value)
			}
			b.Run("list", func(b *testing.B) {
				for b.Loop() {
					list, err := objects.List(context.Background(), metav1.ListOptions{})
					if err != nil || len(list.Items) != len(stored) {
						b.Fatalf("list: %d items, %v; want %d", len(list.Items), err, len(stored))
					}
				}
				b.ReportMetric(float64(len(stored)), "objects")
				b.ReportMetric(float64(total)/float64(len(stored)), "etcd-bytes/object")
			})
		})
	}
}
