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

package nginxreload

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// kubeletVolume is a directory laid out as the kubelet lays out a ConfigMap, Secret or
// downwardAPI volume: files in a timestamped directory, ..data pointing at it, and one
// symlink per name through ..data.
type kubeletVolume struct {
	t   *testing.T
	dir string
	gen int
	old string
}

func newKubeletVolume(t *testing.T, dir string) *kubeletVolume {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &kubeletVolume{t: t, dir: dir}
}

// publish writes files as the kubelet's atomic writer does: a new timestamped
// directory, then one rename of ..data, then the names' symlinks.
func (v *kubeletVolume) publish(files map[string]string) {
	t := v.t
	t.Helper()
	v.gen++
	ts := fmt.Sprintf("..2026_11_26_10_00_%02d.%d", v.gen, 1000+v.gen)
	if err := os.Mkdir(filepath.Join(v.dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(v.dir, ts, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, dataLink)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(v.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, keep := files[e.Name()]; !keep && e.Type()&fs.ModeSymlink != 0 && !strings.HasPrefix(e.Name(), "..") {
			if err := os.Remove(filepath.Join(v.dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name := range files {
		link := filepath.Join(v.dir, name)
		if _, err := os.Lstat(link); errors.Is(err, fs.ErrNotExist) {
			if err := os.Symlink(filepath.Join(dataLink, name), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	if v.old != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, v.old)); err != nil {
			t.Fatal(err)
		}
	}
	v.old = ts
}

// current is the timestamped directory ..data points at.
func (v *kubeletVolume) current() string { return filepath.Join(v.dir, v.old) }

func hashOf(files map[string]string) string {
	m := map[string][]byte{}
	for name, content := range files {
		m[name] = []byte(content)
	}
	return reload.ContentHash(m)
}

// TestHashDirectoryKubeletLayout: a kubelet volume hashes as reload.ContentHash hashes
// the ConfigMap's data; the kubelet's own entries (..data, the timestamped directory, a
// ..xyz file) and subdirectories are no content; swapping ..data changes the hash.
func TestHashDirectoryKubeletLayout(t *testing.T) {
	v := newKubeletVolume(t, filepath.Join(t.TempDir(), "config"))
	v1 := map[string]string{"nginx.conf": "events {}\n", "mime.types": "types {}\n", ".hidden": "a key may start with one dot"}
	v.publish(v1)
	for _, kubelets := range []string{filepath.Join(v.dir, "..xyz"), filepath.Join(v.current(), "..xyz")} {
		if err := os.WriteFile(kubelets, []byte("kubelet's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(v.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var hasher volumeHasher
	for _, hash := range []func(string) (string, error){HashDirectory, hasher.hash} {
		got, err := hash(v.dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := hashOf(v1); got != want {
			t.Errorf("hash %s, want reload.ContentHash %s", got, want)
		}
	}

	v2 := map[string]string{"nginx.conf": "events {}\nhttp {}\n"}
	v.publish(v2)
	for _, hash := range []func(string) (string, error){HashDirectory, hasher.hash} {
		got, err := hash(v.dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := hashOf(v2); got != want {
			t.Errorf("after the swap: hash %s, want %s", got, want)
		}
	}
}

// TestVolumeHasherRereadsOnSwapOnly: with ..data, a file changed behind the kubelet's back
// keeps the remembered hash (only the swap is looked at); without ..data every look
// reads the files.
func TestVolumeHasherRereadsOnSwapOnly(t *testing.T) {
	var hasher volumeHasher
	v := newKubeletVolume(t, filepath.Join(t.TempDir(), "config"))
	v.publish(map[string]string{"nginx.conf": "one"})
	if _, err := hasher.hash(v.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.current(), "nginx.conf"), []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := hasher.hash(v.dir); got != hashOf(map[string]string{"nginx.conf": "one"}) {
		t.Errorf("the hash changed without a swap of ..data: the files were read again")
	}

	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(plain, "nginx.conf"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, _ := hasher.hash(plain); got != hashOf(map[string]string{"nginx.conf": content}) {
			t.Errorf("a directory without ..data holding %q: stale hash", content)
		}
	}
}

func TestHashDirectoryMissing(t *testing.T) {
	var hasher volumeHasher
	if _, err := hasher.hash(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing volume: %v, want fs.ErrNotExist", err)
	}
}

// TestVolumeHasherMidSwap: right after the kubelet swapped ..data, before it linked a new
// key's name, the volume already hashes as its new content; remembering a hash without
// the new key would leave it stale until the next swap.
func TestVolumeHasherMidSwap(t *testing.T) {
	var hasher volumeHasher
	v := newKubeletVolume(t, filepath.Join(t.TempDir(), "config"))
	v.publish(map[string]string{"nginx.conf": "one"})
	if _, err := hasher.hash(v.dir); err != nil {
		t.Fatal(err)
	}
	next := map[string]string{"nginx.conf": "two", "extra.conf": "new key"}
	ts := "..2026_11_26_10_30_00.42"
	if err := os.Mkdir(filepath.Join(v.dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range next {
		if err := os.WriteFile(filepath.Join(v.dir, ts, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ts, filepath.Join(v.dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(v.dir, "..data_tmp"), filepath.Join(v.dir, dataLink)); err != nil {
		t.Fatal(err)
	}
	if got, err := hasher.hash(v.dir); err != nil || got != hashOf(next) {
		t.Errorf("mid-swap: %s, %v; want the new content's %s", got, err, hashOf(next))
	}
}
