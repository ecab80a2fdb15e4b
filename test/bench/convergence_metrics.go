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
	"io"
	"maps"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricSnapshot is one scrape of a Prometheus text endpoint.
type metricSnapshot map[string]*dto.MetricFamily

func parseMetrics(r io.Reader) (metricSnapshot, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return families, nil
}

// sum adds up the counter or gauge samples of a family whose labels pass match (nil:
// all), keyed by the values of keyLabels joined with a space ("" without keyLabels).
// A family that is absent sums to an empty map.
func (s metricSnapshot) sum(name string, match func(labels map[string]string) bool, keyLabels ...string) map[string]float64 {
	out := map[string]float64{}
	family, ok := s[name]
	if !ok {
		return out
	}
	for _, m := range family.GetMetric() {
		key, ok := sampleKey(m, match, keyLabels)
		if !ok {
			continue
		}
		var v float64
		switch {
		case m.Counter != nil:
			v = m.GetCounter().GetValue()
		case m.Gauge != nil:
			v = m.GetGauge().GetValue()
		case m.Untyped != nil:
			v = m.GetUntyped().GetValue()
		default:
			continue
		}
		out[key] += v
	}
	return out
}

// sampleKey is the values of keyLabels of a sample, joined by spaces; false when its
// labels do not pass match.
func sampleKey(m *dto.Metric, match func(labels map[string]string) bool, keyLabels []string) (string, bool) {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if match != nil && !match(labels) {
		return "", false
	}
	key := make([]string, len(keyLabels))
	for i, l := range keyLabels {
		key[i] = labels[l]
	}
	return strings.Join(key, " "), true
}

// histogram adds up the sums and the counts of a histogram family's samples whose
// labels pass match, keyed like sum.
func (s metricSnapshot) histogram(name string, match func(labels map[string]string) bool, keyLabels ...string) (sums, counts map[string]float64) {
	sums, counts = map[string]float64{}, map[string]float64{}
	family, ok := s[name]
	if !ok {
		return sums, counts
	}
	for _, m := range family.GetMetric() {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		key, ok := sampleKey(m, match, keyLabels)
		if !ok {
			continue
		}
		sums[key] += h.GetSampleSum()
		counts[key] += float64(h.GetSampleCount())
	}
	return sums, counts
}

// value is the sum of every sample of a family that passes match.
func (s metricSnapshot) value(name string, match func(labels map[string]string) bool) float64 {
	return metricTotal(s.sum(name, match))
}

// metricDelta is after minus before, key by key, leaving out keys that did not change.
func metricDelta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func metricTotal(m map[string]float64) float64 {
	var t float64
	for _, k := range slices.Sorted(maps.Keys(m)) {
		t += m[k]
	}
	return t
}

// mutatingVerbs are the verbs of apiserver_request_total that write (apply is counted
// as APPLY, not PATCH) and the methods of rest_client_requests_total that do.
var mutatingVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true, "CREATE": true, "UPDATE": true}

func labelIn(name string, values ...string) func(map[string]string) bool {
	return func(l map[string]string) bool { return slices.Contains(values, l[name]) }
}

func allOf(preds ...func(map[string]string) bool) func(map[string]string) bool {
	return func(l map[string]string) bool {
		for _, p := range preds {
			if !p(l) {
				return false
			}
		}
		return true
	}
}

func isWrite(l map[string]string) bool { return mutatingVerbs[l["verb"]] || mutatingVerbs[l["method"]] }
