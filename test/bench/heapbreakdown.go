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
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// heapCategory names a part of an apiserver's live heap by the code that allocated it;
// the first category whose marker appears anywhere in a sample's stack takes the sample.
type heapCategory struct {
	name    string
	markers []string
}

// heapCategories are the parts of the heap that grow with stored objects, in the order a
// sample is tested against them. The same names apply to both servers: a custom resource
// is decoded into unstructured maps, our objects into typed structs.
var heapCategories = []heapCategory{
	{"watch cache index and its snapshots (B-tree nodes)", []string{"/btree.", "storage/cacher/store."}},
	{"label and field sets kept for selectors", []string{"GetAttrs", "FieldsSet", "ObjectMetaFieldsSet", "getAttrsFunc"}},
	{"decoded objects (the objects themselves)", []string{"Unmarshal", "ConvertToVersion", ").Decode", "UnstructuredJSONScheme", "fxamacker/cbor", "pkg/registry/compact"}},
	{"watch cache events (history)", []string{"cacher.(*watchCache)."}},
}

const otherHeap = "everything else (not per object: caches, buffers, the server's own state)"

// HeapPart is one category's live bytes in one server's heap profile.
type HeapPart struct {
	Server   string  `json:"server"`
	Category string  `json:"category"`
	Bytes    float64 `json:"bytes"`
	Objects  int     `json:"objects"`
}

// breakDownHeap sums a heap profile's in-use bytes by category.
func breakDownHeap(p *profile.Profile, server string, objects int) ([]HeapPart, error) {
	index := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			index = i
		}
	}
	if index < 0 {
		return nil, fmt.Errorf("heap profile of %s has no inuse_space samples", server)
	}
	sums := map[string]float64{}
	for _, s := range p.Sample {
		sums[categorise(s)] += float64(s.Value[index])
	}
	var parts []HeapPart
	for _, c := range heapCategories {
		parts = append(parts, HeapPart{Server: server, Category: c.name, Bytes: sums[c.name], Objects: objects})
	}
	return append(parts, HeapPart{Server: server, Category: otherHeap, Bytes: sums[otherHeap], Objects: objects}), nil
}

func categorise(s *profile.Sample) string {
	for _, c := range heapCategories {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				for _, m := range c.markers {
					if strings.Contains(line.Function.Name, m) {
						return c.name
					}
				}
			}
		}
	}
	return otherHeap
}

// renderHeapBreakdown is the table of the heap by category and server, per stored object.
func renderHeapBreakdown(b *strings.Builder, parts []HeapPart) {
	if len(parts) == 0 {
		return
	}
	type row struct{ ours, kube *HeapPart }
	rows := map[string]*row{}
	var order []string
	for i := range parts {
		p := &parts[i]
		r := rows[p.Category]
		if r == nil {
			r = &row{}
			rows[p.Category] = r
			order = append(order, p.Category)
		}
		if p.Server == operatorAPIServer {
			r.ours = p
		} else {
			r.kube = p
		}
	}
	perObject := func(p *HeapPart) float64 {
		if p == nil || p.Objects == 0 {
			return 0
		}
		return p.Bytes / float64(p.Objects) / 1024
	}
	b.WriteString("Where each heap is, by the code that allocated it (live heap profiles after a forced GC at the largest size; KiB per object the server stores):\n\n")
	b.WriteString("| part of the heap | our apiserver MiB | KiB per object | kube-apiserver MiB | KiB per custom resource | ours against kube-apiserver's |\n|---|---|---|---|---|---|\n")
	for _, name := range order {
		r := rows[name]
		ours, kube := perObject(r.ours), perObject(r.kube)
		ratio := "—"
		if kube > 0 && name != otherHeap {
			ratio = fmt.Sprintf("%.2fx", ours/kube)
		}
		mib := func(p *HeapPart) float64 {
			if p == nil {
				return 0
			}
			return p.Bytes / (1 << 20)
		}
		fmt.Fprintf(b, "| %s | %.1f | %.2f | %.1f | %.2f | %s |\n", name, mib(r.ours), ours, mib(r.kube), kube, ratio)
	}
	b.WriteString("\n")
}
