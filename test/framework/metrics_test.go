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

import "testing"

const page = `# TYPE writes_total counter
writes_total{kind="Service",result="error"} 3
writes_total{kind="Service",result="ok"} 4
writes_total{kind="Deployment",result="error"} 5
# TYPE up gauge
up 1
# TYPE admission_seconds histogram
admission_seconds_bucket{name="ResourceQuota",rejected="true",le="+Inf"} 7
admission_seconds_sum{name="ResourceQuota",rejected="true"} 0.5
admission_seconds_count{name="ResourceQuota",rejected="true"} 7
admission_seconds_bucket{name="ResourceQuota",rejected="false",le="+Inf"} 2
admission_seconds_sum{name="ResourceQuota",rejected="false"} 0.25
admission_seconds_count{name="ResourceQuota",rejected="false"} 2
`

func TestMetricsSum(t *testing.T) {
	m, err := ParseMetrics([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	for series, want := range map[string]float64{
		`writes_total`:                                 12,
		`writes_total{kind="Service"}`:                 7,
		`writes_total{kind="Service", result="error"}`: 3,
		`writes_total{kind="Pod"}`:                     0,
		`up`:                                           1,
		`absent_total`:                                 0,
		`admission_seconds_count{rejected="true"}`:     7,
		`admission_seconds_count`:                      9,
		`admission_seconds_sum{rejected="false"}`:      0.25,
	} {
		got, err := m.Sum(series)
		if err != nil || got != want {
			t.Errorf("Sum(%s) = %v, %v; want %v", series, got, err, want)
		}
	}
	for _, bad := range []string{`writes_total{kind="Service"`, `writes_total{kind=Service}`, `writes_total{kind="Service}`} {
		if _, err := m.Sum(bad); err == nil {
			t.Errorf("Sum(%s) accepted a malformed series", bad)
		}
	}
	if _, err := ParseMetrics([]byte("not a metric page {")); err == nil {
		t.Error("ParseMetrics accepted garbage")
	}
}
