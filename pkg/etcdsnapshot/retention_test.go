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
	"slices"
	"testing"
	"time"
)

func TestNameRoundTrips(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 15, 0, 0, time.FixedZone("CET", 3600))
	name := Name(at)
	if name != "nginx-operator-etcd-20261124T091500Z.db" {
		t.Fatalf("Name = %s", name)
	}
	if got, ok := takenAt(name); !ok || !got.Equal(at) {
		t.Fatalf("takenAt(%s) = %v, %v", name, got, ok)
	}
}

func TestExpired(t *testing.T) {
	day := func(d int) string { return Name(time.Date(2026, 11, d, 3, 0, 0, 0, time.UTC)) }
	tests := []struct {
		name  string
		files []string
		keep  int
		want  []string
	}{
		{"fewer than keep", []string{day(1), day(2)}, 3, nil},
		{"exactly keep", []string{day(1), day(2), day(3)}, 3, nil},
		{"oldest go first, whatever the listing order", []string{day(4), day(1), day(5), day(2), day(3)}, 2, []string{day(1), day(2), day(3)}},
		{"other files are never touched", []string{day(1), day(2), day(3) + ".part", "notes.txt", "nginx-operator-etcd-latest.db", "lost+found"}, 1, []string{day(1)}},
		{"keep below one keeps the newest", []string{day(1), day(2)}, 0, []string{day(1)}},
		{"nothing there", nil, 7, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Expired(tt.files, tt.keep); !slices.Equal(got, tt.want) {
				t.Errorf("Expired(%v, %d) = %v, want %v", tt.files, tt.keep, got, tt.want)
			}
		})
	}
}
