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
	"strings"
	"time"
)

// Snapshots are named by the time they were taken, in UTC, so that names sort by age and a
// restore can pick one by name: nginx-operator-etcd-20261124T101500Z.db.
const (
	namePrefix = "nginx-operator-etcd-"
	nameSuffix = ".db"
	timeFormat = "20060102T150405Z"
)

// Name is the file name of a snapshot taken at t.
func Name(t time.Time) string {
	return namePrefix + t.UTC().Format(timeFormat) + nameSuffix
}

// takenAt parses a snapshot's file name; ok is false for any other file.
func takenAt(name string) (t time.Time, ok bool) {
	stamp, found := strings.CutPrefix(name, namePrefix)
	if !found {
		return time.Time{}, false
	}
	stamp, found = strings.CutSuffix(stamp, nameSuffix)
	if !found {
		return time.Time{}, false
	}
	t, err := time.Parse(timeFormat, stamp)
	return t, err == nil
}

// Expired returns the snapshots among names that are beyond the newest keep, oldest first.
// Files that are not snapshots (partial downloads, anything else in the directory) are
// never returned.
func Expired(names []string, keep int) []string {
	type snapshot struct {
		name string
		at   time.Time
	}
	var snapshots []snapshot
	for _, n := range names {
		if at, ok := takenAt(n); ok {
			snapshots = append(snapshots, snapshot{n, at})
		}
	}
	slices.SortFunc(snapshots, func(a, b snapshot) int { return b.at.Compare(a.at) })
	keep = max(keep, 1)
	if len(snapshots) <= keep {
		return nil
	}
	var expired []string
	for i := len(snapshots) - 1; i >= keep; i-- {
		expired = append(expired, snapshots[i].name)
	}
	return expired
}
