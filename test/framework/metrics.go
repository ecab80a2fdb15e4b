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

package framework

import (
	"bytes"
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is a /metrics page in Prometheus' text format, parsed: the suites' one reader
// of metrics.
type Metrics map[string]*dto.MetricFamily

// ParseMetrics parses a page in Prometheus' text exposition format.
func ParseMetrics(text []byte) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return Metrics(families), nil
}

// Sum adds the values of a series' samples. The series is a metric name, optionally with
// label matchers as Prometheus writes them: `name{label="value",...}`; a sample counts
// when it has every label given with that value. The _count and _sum of a histogram or a
// summary are named as in the text format.
func (m Metrics) Sum(series string) (float64, error) {
	name, want, err := parseSeries(series)
	if err != nil {
		return 0, err
	}
	family, value := m[name], sampleValue
	if family == nil {
		for suffix, v := range map[string]func(*dto.Metric) float64{"_count": sampleCount, "_sum": sampleSum} {
			if base, ok := strings.CutSuffix(name, suffix); ok && m[base] != nil {
				family, value = m[base], v
			}
		}
	}
	if family == nil {
		return 0, nil
	}
	var total float64
next:
	for _, sample := range family.GetMetric() {
		have := map[string]string{}
		for _, l := range sample.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		total += value(sample)
	}
	return total, nil
}

// parseSeries splits `name{a="x",b="y"}` into the name and its labels.
func parseSeries(series string) (string, map[string]string, error) {
	name, rest, hasLabels := strings.Cut(series, "{")
	labels := map[string]string{}
	if !hasLabels {
		return name, labels, nil
	}
	body, ok := strings.CutSuffix(rest, "}")
	if !ok {
		return "", nil, fmt.Errorf("series %q: no closing brace", series)
	}
	for body != "" {
		key, after, ok := strings.Cut(body, `="`)
		if !ok {
			return "", nil, fmt.Errorf("series %q: want label=\"value\" pairs", series)
		}
		value, after, ok := strings.Cut(after, `"`)
		if !ok {
			return "", nil, fmt.Errorf("series %q: unterminated value of %s", series, key)
		}
		labels[strings.TrimSpace(key)] = value
		body = strings.TrimPrefix(strings.TrimSpace(after), ",")
	}
	return name, labels, nil
}

func sampleValue(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	default:
		return s.GetUntyped().GetValue()
	}
}

func sampleCount(s *dto.Metric) float64 {
	if s.Histogram != nil {
		return float64(s.Histogram.GetSampleCount())
	}
	return float64(s.GetSummary().GetSampleCount())
}

func sampleSum(s *dto.Metric) float64 {
	if s.Histogram != nil {
		return s.Histogram.GetSampleSum()
	}
	return s.GetSummary().GetSampleSum()
}
