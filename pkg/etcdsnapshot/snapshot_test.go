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

package etcdsnapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/example/nginx-operator/pkg/embeddedetcd"
)

// TestSaveTakesSnapshotsAndKeepsTheNewest saves snapshots of a real (embedded) etcd: the
// first endpoint refuses connections and the next one gives the snapshot; each file is
// complete under its final name, and only the newest Keep stay, other files untouched.
func TestSaveTakesSnapshotsAndKeepsTheNewest(t *testing.T) {
	etcd, err := embeddedetcd.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(context.Background(), "/registry/key", "value"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	opts := Options{
		Endpoints: []string{"http://127.0.0.1:1", etcd.ClientURL},
		Dir:       dir, Keep: 2, Timeout: 30 * time.Second, ConnectTimeout: time.Second,
		Now: func() time.Time { return now },
	}
	var saved []string
	for i := 0; i < 3; i++ {
		res, err := Save(context.Background(), opts)
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		if res.Endpoint != etcd.ClientURL || res.Revision < 2 || res.Size == 0 || res.EtcdVersion == "" {
			t.Errorf("snapshot %d: %+v", i, res)
		}
		if info, err := os.Stat(res.Path); err != nil || info.Size() != res.Size {
			t.Errorf("snapshot %d at %s: %v", i, res.Path, err)
		}
		saved = append(saved, filepath.Base(res.Path))
		now = now.Add(6 * time.Hour)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{saved[1], saved[2], "notes.txt"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("directory holds %v, want %v (the newest 2 snapshots and the other file)", names, want)
	}
}

func TestSaveFailsWhenNoMemberAnswers(t *testing.T) {
	_, err := Save(context.Background(), Options{Endpoints: []string{"http://127.0.0.1:1"}, Dir: t.TempDir(), Keep: 1, Timeout: 3 * time.Second, ConnectTimeout: time.Second})
	if err == nil {
		t.Fatal("a snapshot with no member answering succeeded")
	}
	t.Log(err)
}
