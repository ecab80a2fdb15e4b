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

package apiserver

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// streamingList writes a body the way the library streams a list: many small writes.
func streamingList(chunk []byte, n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for range n {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
}

func withVerb(verb string, handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info := &apirequest.RequestInfo{IsResourceRequest: true, Verb: verb, Resource: "nginxoperators"}
		handler.ServeHTTP(w, req.WithContext(apirequest.WithRequestInfo(req.Context(), info)))
	})
}

// countingListener counts the writes to its connections: with TLS underneath, each is
// one or more TLS records on their way to the socket.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return &countingConn{Conn: c, writes: &l.writes}, err
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// serveOverHTTP2 serves handler over TLS and HTTP/2 and fetches its response twice
// without gzip on one connection. It returns the second body and the writes the server
// made to the connection for it: by then TLS has left its slow start (small records for
// a connection's first 128 KiB) behind, as on a long-lived client's connection.
func serveOverHTTP2(t *testing.T, handler http.Handler) ([]byte, int64) {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	counting := &countingListener{Listener: srv.Listener}
	srv.Listener = counting
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).DisableCompression = true
	var body []byte
	var writes int64
	for range 2 {
		before := counting.writes.Load()
		resp, err := client.Get(srv.URL + "/apis/operator.example.com/v1alpha2/nginxoperators")
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("served over %s, want HTTP/2", resp.Proto)
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("got %d %q, want 200 application/json", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		writes = counting.writes.Load() - before
	}
	return body, writes
}

func TestListWriteBufferSendsFullRecords(t *testing.T) {
	chunk := bytes.Repeat([]byte("x"), 300)
	const n = 4000 // 1.2 MB, as a list of a few thousand objects
	want := bytes.Repeat(chunk, n)

	plainBody, plainWrites := serveOverHTTP2(t, withVerb("list", streamingList(chunk, n)))
	bufferedBody, bufferedWrites := serveOverHTTP2(t, withVerb("list", withListWriteBuffer(streamingList(chunk, n))))
	if !bytes.Equal(plainBody, want) || !bytes.Equal(bufferedBody, want) {
		t.Fatalf("bodies differ from what the handler wrote: %d and %d bytes, want %d", len(plainBody), len(bufferedBody), len(want))
	}
	t.Logf("connection writes for a %d-byte list: %d unbuffered, %d buffered", len(want), plainWrites, bufferedWrites)
	// Unbuffered, HTTP/2 hands the connection one 4 KiB chunk at a time, each a DATA
	// frame in a TLS record of its own: about 300 here. Buffered, a 64 KiB chunk leaves
	// as four 16 KiB frames, each a full TLS record after a small one for the frame's
	// header: about half as many writes, carrying four times the data each.
	if bufferedWrites*10 > plainWrites*6 {
		t.Fatalf("buffered list made %d connection writes against %d unbuffered; want at most 60%%", bufferedWrites, plainWrites)
	}
}

// recorder notes each write and flush it receives.
type recorder struct {
	httptest.ResponseRecorder
	writes, flushes int
}

func (r *recorder) Write(p []byte) (int, error) { r.writes++; return r.ResponseRecorder.Write(p) }
func (r *recorder) Flush()                      { r.flushes++ }
func (r *recorder) CloseNotify() <-chan bool    { return nil }

func TestListWriteBufferLeavesWatchesAndFlushesAlone(t *testing.T) {
	chunk := []byte(`{"type":"ADDED"}`)
	watch := &recorder{ResponseRecorder: *httptest.NewRecorder()}
	withVerb("watch", withListWriteBuffer(streamingList(chunk, 10))).ServeHTTP(watch, httptest.NewRequest(http.MethodGet, "/", nil))
	if watch.writes != 10 {
		t.Errorf("a watch's 10 writes reached the connection as %d; want each at once", watch.writes)
	}

	// A list handler that flushes gets its bytes out at once, then the rest at the end.
	list := &recorder{ResponseRecorder: *httptest.NewRecorder()}
	flushing := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(chunk)
		w.(http.Flusher).Flush()
		if list.writes != 1 || list.flushes != 1 {
			t.Errorf("after Flush the connection saw %d writes and %d flushes; want 1 and 1", list.writes, list.flushes)
		}
		_, _ = w.Write(chunk)
		_, _ = w.Write(chunk)
	})
	withVerb("list", withListWriteBuffer(flushing)).ServeHTTP(list, httptest.NewRequest(http.MethodGet, "/", nil))
	if got := list.Body.String(); got != string(chunk)+string(chunk)+string(chunk) {
		t.Errorf("body %q", got)
	}
	if list.writes != 2 {
		t.Errorf("the list's last two writes reached the connection as %d writes; want 1", list.writes-1)
	}
}
