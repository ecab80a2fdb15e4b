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
	"context"
	"io"
	"net/http"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// healthTimeout bounds the request of the health path after a reload.
const healthTimeout = 2 * time.Second

// healthClient asks nginx in the pod: no proxy, no redirect followed (a redirect is an
// answer, and its target may be outside the pod).
var healthClient = &http.Client{
	Transport: func() *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.DisableKeepAlives = true
		return t
	}(),
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// checkHealth requests url once and tells what it answered, for content.
func checkHealth(ctx context.Context, url, content string) reload.Health {
	h := reload.Health{Content: content}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		h.Error = err.Error()
		return h
	}
	resp, err := healthClient.Do(req)
	if err != nil {
		h.Error = err.Error()
		return h
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	h.Code = resp.StatusCode
	return h
}
