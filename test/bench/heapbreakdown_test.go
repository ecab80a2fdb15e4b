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

package main

import (
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// heapProfile is a heap profile with one sample per stack (leaf first) of the given
// in-use bytes.
func heapProfile(stacks map[int64][]string) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}}
	var id uint64
	for bytes, stack := range stacks {
		s := &profile.Sample{Value: []int64{1, bytes}}
		for _, name := range stack {
			id++
			fn := &profile.Function{ID: id, Name: name}
			p.Function = append(p.Function, fn)
			loc := &profile.Location{ID: id, Line: []profile.Line{{Function: fn}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func TestBreakDownHeap(t *testing.T) {
	p := heapProfile(map[int64][]string{
		1000: {"k8s.io/utils/third_party/forked/golang/btree.(*node[...]).mutableFor", "k8s.io/apiserver/pkg/storage/cacher.(*watchCache).processEvent"},
		200:  {"k8s.io/apiserver/pkg/registry/generic.ObjectMetaFieldsSet", "github.com/example/nginx-operator/pkg/registry/nginxoperator.GetAttrs", "k8s.io/apiserver/pkg/storage/cacher.(*watchCache).processEvent"},
		3000: {"k8s.io/api/core/v1.(*ResourceRequirements).Unmarshal", "k8s.io/apiserver/pkg/storage/etcd3.decodeObj"},
		50:   {"k8s.io/apiserver/pkg/storage/cacher.(*watchCache).processEvent"},
		700:  {"github.com/example/nginx-operator/pkg/generated/openapi.GetOpenAPIDefinitions"},
	})
	parts, err := breakDownHeap(p, operatorAPIServer, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, part := range parts {
		got[part.Category] = part.Bytes
	}
	want := map[string]float64{
		heapCategories[0].name: 1000, heapCategories[1].name: 200, heapCategories[2].name: 3000,
		heapCategories[3].name: 50, otherHeap: 700,
	}
	for name, bytes := range want {
		if got[name] != bytes {
			t.Errorf("%s: %v bytes, want %v", name, got[name], bytes)
		}
	}
	var b strings.Builder
	renderHeapBreakdown(&b, parts)
	if !strings.Contains(b.String(), "| decoded objects (the objects themselves) | 0.0 | 0.29 |") {
		t.Errorf("table:\n%s", b.String())
	}
}
