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

package content

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/nginx-operator/pkg/apis/operator/operand"
	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// ReloadStateReader reads the state the sidecar of a pod reports (reload.State).
type ReloadStateReader func(ctx context.Context, pod *corev1.Pod) (reload.State, error)

// sidecarClient reads the sidecars. A pod's configuration may take the exporter's port
// and answer for it: so no proxy, and a redirect is an answer other than 200, never
// followed, so the controller's requests go to the pod's IP and port only.
var sidecarClient = &http.Client{
	Transport: func() *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		return t
	}(),
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// HTTPReloadState reads the sidecar's state from the pod's IP, on the exporter's port.
func HTTPReloadState(ctx context.Context, pod *corev1.Pod) (reload.State, error) {
	var state reload.State
	if pod.Status.PodIP == "" {
		return state, fmt.Errorf("pod %s has no IP yet", pod.Name)
	}
	return readSidecarState(ctx, "http://"+net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(operand.MetricsPort))+reload.StatePath)
}

// TrafficReader reads the traffic a pod's sidecar counted since a time (reload.Traffic).
type TrafficReader func(ctx context.Context, pod *corev1.Pod, since time.Time) (reload.Traffic, error)

// HTTPTraffic reads a pod's traffic from its sidecar, on the exporter's port.
func HTTPTraffic(ctx context.Context, pod *corev1.Pod, since time.Time) (reload.Traffic, error) {
	var t reload.Traffic
	if pod.Status.PodIP == "" {
		return t, fmt.Errorf("pod %s has no IP yet", pod.Name)
	}
	u := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(operand.MetricsPort)) + reload.TrafficPath +
		"?since=" + url.QueryEscape(since.UTC().Format(time.RFC3339))
	return t, readSidecar(ctx, u, &t)
}

// readSidecarState reads the state at url with sidecarClient.
func readSidecarState(ctx context.Context, url string) (reload.State, error) {
	var state reload.State
	return state, readSidecar(ctx, url, &state)
}

// readSidecar decodes the JSON at url into v, with sidecarClient.
func readSidecar(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, reloadReadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := sidecarClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // read, or given up on: nothing to lose
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 64<<10)).Decode(v)
}
