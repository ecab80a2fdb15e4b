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
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var samples []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		samples = append(samples, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p, want float64
	}{{50, 50}, {99, 99}, {100, 100}, {1, 1}, {0.1, 1}} {
		if got := Percentile(samples, tc.p); got != tc.want {
			t.Errorf("p%v = %v ms, want %v", tc.p, got, tc.want)
		}
	}
	few := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}
	if got := Percentile(few, 99); got != 3 {
		t.Errorf("p99 of three samples = %v, want their maximum 3", got)
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("p50 of nothing = %v, want NaN", got)
	}
	if few[0] != 3*time.Millisecond {
		t.Error("Percentile reordered its input")
	}
}

func TestSpreadOf(t *testing.T) {
	s := SpreadOf([]float64{3, math.NaN(), 1, 2})
	if s != (Spread{Median: 2, Min: 1, Max: 3, Rounds: 3}) {
		t.Errorf("odd count: %+v", s)
	}
	if s := SpreadOf([]float64{4, 1, 2, 10}); s.Median != 3 || s.Min != 1 || s.Max != 10 || s.Rounds != 4 {
		t.Errorf("even count: %+v", s)
	}
	empty := SpreadOf([]float64{math.NaN()})
	if empty.Valid() || !math.IsNaN(empty.Median) {
		t.Errorf("no rounds: %+v", empty)
	}
	data, err := json.Marshal(struct {
		A Spread `json:"a"`
		B Spread `json:"b"`
	}{empty, s})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), `{"a":null,"b":{"median":2,"min":1,"max":3,"rounds":3}}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(6, 2); got != 3 {
		t.Errorf("6/2 = %v", got)
	}
	for _, tc := range [][2]float64{{1, 0}, {math.NaN(), 1}, {1, math.NaN()}} {
		if got := Ratio(tc[0], tc[1]); !math.IsNaN(got) {
			t.Errorf("Ratio(%v, %v) = %v, want NaN", tc[0], tc[1], got)
		}
	}
}

func TestShareSplitsEvenly(t *testing.T) {
	for _, tc := range []struct{ n, parts int }{{10, 3}, {4000, 6}, {2, 5}, {0, 3}} {
		sum, lo, hi := 0, tc.n, 0
		for i := range tc.parts {
			v := share(tc.n, tc.parts, i)
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		if sum != tc.n || hi-lo > 1 {
			t.Errorf("share(%d, %d): sum %d, parts from %d to %d", tc.n, tc.parts, sum, lo, hi)
		}
	}
}
