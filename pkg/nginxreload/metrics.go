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

package nginxreload

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	reloadsDesc = prometheus.NewDesc("nginx_config_reloads_total",
		"Reloads of nginx's configuration the exporter asked for (a SIGHUP once the volumes held new content), by result: success when nginx started new workers, failure when it kept its configuration.",
		[]string{"result"}, nil)
	lastSuccessDesc = prometheus.NewDesc("nginx_config_last_reload_successful",
		"1 when nginx took the configuration of the last reload the exporter asked for, or none was asked for yet; 0 when it kept its previous configuration.",
		nil, nil)
	loadedDesc = prometheus.NewDesc("nginx_config_loaded_info",
		"Always 1; hash names the content nginx runs: the first 16 hex digits of the SHA-256 of the volume=hash pairs /reload reports as loaded (empty when not known).",
		[]string{"hash"}, nil)
)

// Describe implements prometheus.Collector.
func (r *Reloader) Describe(ch chan<- *prometheus.Desc) {
	ch <- reloadsDesc
	ch <- lastSuccessDesc
	ch <- loadedDesc
}

// Collect implements prometheus.Collector from the state: both results are there from
// the start, so that a rate over them has a first sample.
func (r *Reloader) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	s, lastFailed := r.state, r.lastFailed
	r.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(s.Reloads-s.Failures), "success")
	ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(s.Failures), "failure")
	last := 1.0
	if lastFailed {
		last = 0
	}
	ch <- prometheus.MustNewConstMetric(lastSuccessDesc, prometheus.GaugeValue, last)
	ch <- prometheus.MustNewConstMetric(loadedDesc, prometheus.GaugeValue, 1, LoadedHash(s.Loaded))
}

// LoadedHash is the hash label of nginx_config_loaded_info for a reload.State's Loaded:
// short enough for a label, whatever the number of volumes.
func LoadedHash(loaded string) string {
	if loaded == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(loaded))
	return hex.EncodeToString(sum[:8])
}
