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
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
)

// DefaultMaxErrorLogBytes is the size beyond which the error log is emptied once read:
// it lives in an emptyDir, which nothing else ever cleans.
const DefaultMaxErrorLogBytes = 1 << 20

// maxReadBytes bounds one read of the log; the rest waits for the next one.
const maxReadBytes = 1 << 20

// logTail follows nginx's error log: it hands over each new complete line, copies it
// to out (the sidecar's stderr, so that the pod's logs show nginx's errors even when
// the user's nginx.conf logs elsewhere), and empties the file once it is read beyond
// max. Used by one goroutine.
type logTail struct {
	path   string
	max    int64
	out    io.Writer
	offset int64
}

// read returns the lines nginx appended since the last read, without their newline. A
// file that is not there yet (nginx has logged nothing) has no lines. The lines come
// with an error too when the file could not be emptied.
func (t *logTail) read() ([]string, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		t.offset = 0
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < t.offset {
		// Emptied by someone else (or by us, in another life): start over.
		t.offset = 0
	}
	n := min(fi.Size()-t.offset, maxReadBytes)
	if n <= 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, t.offset); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// A line nginx is still writing waits for its newline, unless it alone fills a read.
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i+1]
	} else if n < maxReadBytes {
		return nil, nil
	}
	t.offset += int64(len(buf))
	if t.out != nil {
		_, _ = t.out.Write(buf)
	}
	lines := strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n")
	if t.offset > t.max {
		return lines, t.truncate(f)
	}
	return lines, nil
}

// truncate empties the file once all of it is read. nginx opens it O_APPEND, so its next
// line goes to the new end, 0. A line appended since the read would be lost: then the
// file waits for the next read.
func (t *logTail) truncate(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() != t.offset {
		return err
	}
	if err := os.Truncate(t.path, 0); err != nil {
		return err
	}
	t.offset = 0
	return nil
}

// nginxPrefix is what nginx writes before a message: "2026/11/26 10:00:00 [emerg]
// 7#7: " (date, level, pid#tid, and "*connection " for a request's message).
var nginxPrefix = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} (\[[a-z]+\]) \d+#\d+: (?:\*\d+ )?`)

// failureLine tells whether a log line says nginx refused its configuration, and
// returns it as "[emerg] <text>": the time and pid#tid say nothing to a user.
func failureLine(line string) (string, bool) {
	if !strings.Contains(line, "[emerg]") && !strings.Contains(line, "[alert]") {
		return "", false
	}
	if m := nginxPrefix.FindStringSubmatchIndex(line); m != nil {
		return line[m[2]:m[3]] + " " + strings.TrimSpace(line[m[1]:]), true
	}
	return strings.TrimSpace(line), true
}
