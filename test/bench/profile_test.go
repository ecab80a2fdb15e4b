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
	"testing"

	"github.com/google/pprof/profile"
)

func TestSummariseListsOurCodeByCumAndAnyCodeByFlat(t *testing.T) {
	fn := func(id uint64, name string) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: &profile.Function{ID: id, Name: name}}}}
	}
	ours := fn(1, ourCode+"pkg/apis/operator/v1alpha2.(*NginxOperator).Unmarshal")
	quantity := fn(2, "k8s.io/api/core/v1.(*ResourceRequirements).Unmarshal")
	btree := fn(3, "k8s.io/utils/third_party/forked/golang/btree.(*node).mutableFor")
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_objects"}, {Type: "inuse_space"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{quantity, ours}, Value: []int64{1, 60}},
			{Location: []*profile.Location{btree}, Value: []int64{1, 40}},
		},
	}
	s := summarise(p, 5)
	if len(s.Top) != 1 || s.Top[0].Cum != 60 || s.Top[0].Flat != 0 {
		t.Errorf("our code: %+v", s.Top)
	}
	if len(s.Flat) != 2 || s.Flat[0].Function != quantity.Line[0].Function.Name || s.Flat[0].Flat != 60 || s.Flat[1].Flat != 40 {
		t.Errorf("any code by flat share: %+v", s.Flat)
	}
}
