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
	"bufio"
	"net/http"
	"sync"

	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
)

// listWriteBufferSize is how much of a list response is handed to the connection at a
// time: a few TLS records' worth, so that a long list leaves in full records.
const listWriteBufferSize = 64 << 10

var listWriteBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, listWriteBufferSize) }}

// withListWriteBuffer buffers the responses to list requests. The library streams a
// list item by item; without gzip (the aggregator asks for it, direct clients may not)
// every few hundred bytes reach the HTTP/2 response writer, which passes each 4 KiB it
// collects to the connection's goroutine and waits for it to be written: one DATA
// frame, one TLS record and one write system call per 4 KiB. Buffering 64 KiB in front
// of it makes the hand-offs 16 times fewer and the records full (16 KiB). Watches are
// left alone: each event must leave at once.
func withListWriteBuffer(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := apirequest.RequestInfoFrom(req.Context())
		if !ok || !info.IsResourceRequest || info.Verb != "list" {
			handler.ServeHTTP(w, req)
			return
		}
		buf := listWriteBuffers.Get().(*bufio.Writer)
		buf.Reset(w)
		handler.ServeHTTP(responsewriter.WrapForHTTP1Or2(&bufferedResponseWriter{ResponseWriter: w, buf: buf}), req)
		// A write error here is the client's connection gone; the handler has returned
		// and nobody is left to tell.
		_ = buf.Flush()
		buf.Reset(nil)
		listWriteBuffers.Put(buf)
	})
}

// bufferedResponseWriter writes the body through buf; headers go straight through, and
// Flush (a handler that wants its bytes out now) empties buf first.
type bufferedResponseWriter struct {
	http.ResponseWriter
	buf *bufio.Writer
}

func (w *bufferedResponseWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *bufferedResponseWriter) Flush() {
	if w.buf.Flush() == nil {
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func (w *bufferedResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
