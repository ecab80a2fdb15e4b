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

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// dataLink is the symlink the kubelet swaps, in one rename, to publish a volume's new
// content: the visible files are symlinks through it.
const dataLink = "..data"

// HashDirectory hashes a mounted volume as reload.ContentHash hashes the ConfigMap or
// Secret it came from: each visible regular file (symlinks followed) by name. Names
// starting with ".." are the kubelet's bookkeeping, not content; anything but a regular
// file (a directory, say) is no content key either, nor is a symlink to nothing. A
// missing dir is an error that errors.Is(err, fs.ErrNotExist) recognises: the volume is
// not mounted (yet).
func HashDirectory(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		files[name] = data
	}
	return reload.ContentHash(files), nil
}

// volumeHasher remembers each directory's hash with the ..data target it was read
// from, so that polling costs one readlink per volume until the kubelet swaps it.
// Used by one goroutine.
type volumeHasher struct {
	cache map[string]cachedHash
}

type cachedHash struct{ target, hash string }

// maxSwapRetries bounds re-reads of a directory whose ..data moved while it was read:
// the kubelet removes the old target right after the swap.
const maxSwapRetries = 3

// hash reads a kubelet volume in the directory ..data points at, not through the
// visible names: for a moment after a swap those still lack a new key's link, or point
// at a removed one, and a hash remembered from that moment would never be read again.
// The target holds the same flat files the visible names show.
func (v *volumeHasher) hash(dir string) (string, error) {
	link := filepath.Join(dir, dataLink)
	for range maxSwapRetries {
		target, err := os.Readlink(link)
		if err != nil {
			// No ..data (not a kubelet volume, as in tests): nothing tells a change,
			// read it every time.
			return HashDirectory(dir)
		}
		if c, ok := v.cache[dir]; ok && c.target == target {
			return c.hash, nil
		}
		data := target
		if !filepath.IsAbs(data) {
			data = filepath.Join(dir, data)
		}
		h, err := HashDirectory(data)
		if err == nil {
			if v.cache == nil {
				v.cache = map[string]cachedHash{}
			}
			v.cache[dir] = cachedHash{target: target, hash: h}
			return h, nil
		}
		if again, _ := os.Readlink(link); again == target {
			return "", err // not a swap: a real error
		}
	}
	return "", fmt.Errorf("%s: the kubelet kept swapping %s while it was read", dir, dataLink)
}
