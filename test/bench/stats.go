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
	"sort"
	"time"
)

// Spread is the median of several rounds' values with the smallest and largest: this
// machine is shared and noisy, so one round proves little and the range says how much.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Rounds int     `json:"rounds"`
}

// SpreadOf summarises per-round values; NaN values (a round that measured nothing) are
// left out.
func SpreadOf(values []float64) Spread {
	kept := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 {
		return Spread{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	sort.Float64s(kept)
	return Spread{Median: median(kept), Min: kept[0], Max: kept[len(kept)-1], Rounds: len(kept)}
}

// MarshalJSON writes null for a spread with no rounds (JSON has no NaN).
func (s Spread) MarshalJSON() ([]byte, error) {
	if !s.Valid() {
		return []byte("null"), nil
	}
	type plain Spread
	return json.Marshal(plain(s))
}

// Valid reports whether any round measured something.
func (s Spread) Valid() bool { return s.Rounds > 0 }

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Percentile is the nearest-rank percentile (0 < p <= 100) of durations in
// milliseconds; NaN for no samples. Nearest rank never invents a value between two
// samples, so the p99 of a few samples is honestly their maximum.
func Percentile(samples []time.Duration, p float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	sorted := append([]time.Duration(nil), samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return float64(sorted[rank-1]) / float64(time.Millisecond)
}

// Ratio is a/b, NaN when either side is missing or b is zero.
func Ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return a / b
}
