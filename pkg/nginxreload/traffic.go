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
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/example/nginx-operator/pkg/apis/operator/operand/reload"
)

// TrafficRetention is how far back TrafficLog answers: the longest analysis window of
// spec.canary.
const TrafficRetention = time.Hour

// DefaultMaxAccessLogBytes is the size beyond which the access log is emptied once read.
const DefaultMaxAccessLogBytes = 4 << 20

// TrafficLog counts what nginx answered, second by second, from the access log nginx
// writes in reload.TrafficLogFormat, for the controller to compare the pods of a staged
// reload (reload.TrafficPath). It keeps TrafficRetention of seconds; a request is
// counted in the second nginx logged it.
type TrafficLog struct {
	// Path is the access log (reload.AccessLog).
	Path string
	// Interval between two reads of the log (0: DefaultInterval).
	Interval time.Duration
	Logger   *slog.Logger

	tail *logTail

	mu      sync.Mutex
	seconds [int(TrafficRetention / time.Second)]second
}

// second is the traffic of one second, unix seconds at.
type second struct {
	at      int64
	traffic reload.Traffic
}

// Run reads the log every Interval until ctx is done.
func (l *TrafficLog) Run(ctx context.Context) {
	if l.Interval <= 0 {
		l.Interval = DefaultInterval
	}
	if l.Logger == nil {
		l.Logger = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(l.Interval)
	defer tick.Stop()
	failing := ""
	for {
		err := l.read()
		switch {
		case err != nil && err.Error() != failing:
			failing = err.Error()
			l.Logger.Warn("reading the access log", "path", l.Path, "err", err)
		case err == nil:
			failing = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// read counts the lines nginx appended since the last read.
func (l *TrafficLog) read() error {
	if l.tail == nil {
		l.tail = &logTail{path: l.Path, max: DefaultMaxAccessLogBytes}
	}
	lines, err := l.tail.read()
	for _, line := range lines {
		l.count(line)
	}
	return err
}

// count adds one line of reload.TrafficLogFormat; a line of another shape (a user's own
// log_format to the same file) is skipped.
func (l *TrafficLog) count(line string) {
	fields := strings.Fields(line)
	if len(fields) != 3 {
		return
	}
	msec, err1 := strconv.ParseFloat(fields[0], 64)
	status, err2 := strconv.Atoi(fields[1])
	took, err3 := strconv.ParseFloat(fields[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || msec <= 0 || math.IsInf(msec, 0) {
		return
	}
	at := int64(msec)
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &l.seconds[at%int64(len(l.seconds))]
	if s.at != at {
		if s.at > at {
			return // older than what is kept
		}
		*s = second{at: at}
	}
	s.traffic.Observe(status, took)
}

// Since adds up the traffic of the seconds from since's on.
func (l *TrafficLog) Since(since time.Time) reload.Traffic {
	from := since.Unix()
	var t reload.Traffic
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.seconds {
		if s := &l.seconds[i]; s.at >= from && s.at > 0 {
			t.Add(s.traffic)
		}
	}
	return t
}

// Handler answers Since(the query's since) as JSON.
func (l *TrafficLog) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		since, err := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
		if err != nil {
			http.Error(w, "since: "+err.Error(), http.StatusBadRequest)
			return
		}
		body, err := json.Marshal(l.Since(since))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(body, '\n'))
	})
}
