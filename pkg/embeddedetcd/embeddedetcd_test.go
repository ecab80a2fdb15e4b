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

package embeddedetcd

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// Keeping data across restarts through the apiserver is covered by
// test/integration's TestRestartKeepsData.
func TestStartsHealthyUnderTheDataDirectoryAndRestarts(t *testing.T) {
	dir := t.TempDir()
	first, err := Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	expectHealthy(t, first.ClientURL)
	for _, p := range []string{"etcd/member/snap/db", "etcd.log"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	first.Close()
	if resp, err := http.Get(first.ClientURL + "/health"); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers after Close", first.ClientURL)
	}

	// Close released the data directory, so the next start can open it.
	second, err := Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	expectHealthy(t, second.ClientURL)
}

func expectHealthy(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct{ Health string }
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil || resp.StatusCode != http.StatusOK || health.Health != "true" {
		t.Errorf("%s/health: %s %+v %v", url, resp.Status, health, err)
	}
}
