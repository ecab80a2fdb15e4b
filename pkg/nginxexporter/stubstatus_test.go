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

package nginxexporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStubStatus(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     StubStatus
		wantErr  string
	}{
		{name: "nginx 1.27", in: "Active connections: 291 \nserver accepts handled requests\n 16630948 16630948 31070465 \nReading: 6 Writing: 179 Waiting: 106 \n",
			want: StubStatus{Active: 291, Accepted: 16630948, Handled: 16630948, Requests: 31070465, Reading: 6, Writing: 179, Waiting: 106}},
		{name: "CRLF and no trailing newline", in: "Active connections: 1\r\nserver accepts handled requests\r\n 2 3 4\r\nReading: 5 Writing: 6 Waiting: 7",
			want: StubStatus{Active: 1, Accepted: 2, Handled: 3, Requests: 4, Reading: 5, Writing: 6, Waiting: 7}},
		{name: "counters beyond 32 bits", in: "Active connections: 0\nserver accepts handled requests\n 18446744073709551615 5000000000 5000000001\nReading: 0 Writing: 0 Waiting: 0\n",
			want: StubStatus{Accepted: 18446744073709551615, Handled: 5000000000, Requests: 5000000001}},
		{name: "empty", in: "", wantErr: "want 4 lines, got 0"},
		{name: "an HTML page", in: "<html>\n<head><title>404 Not Found</title></head>\n<body>\n</body>\n</html>\n", wantErr: "want 4 lines"},
		{name: "negative", in: "Active connections: -1\nserver accepts handled requests\n 1 1 1\nReading: 0 Writing: 0 Waiting: 0\n", wantErr: `line 1: "-1" is not a count`},
		{name: "overflow", in: "Active connections: 1\nserver accepts handled requests\n 18446744073709551616 1 1\nReading: 0 Writing: 0 Waiting: 0\n", wantErr: "line 3"},
		{name: "two counts", in: "Active connections: 1\nserver accepts handled requests\n 1 1\nReading: 0 Writing: 0 Waiting: 0\n", wantErr: "line 3: want 3 counts"},
		{name: "wrong header", in: "Active connections: 1\nserver accepts requests\n 1 1 1\nReading: 0 Writing: 0 Waiting: 0\n", wantErr: "line 2"},
		{name: "states swapped", in: "Active connections: 1\nserver accepts handled requests\n 1 1 1\nWriting: 0 Reading: 0 Waiting: 0\n", wantErr: `line 4: want "Reading:"`},
		{name: "state missing", in: "Active connections: 1\nserver accepts handled requests\n 1 1 1\nReading: 0 Writing: 0\n", wantErr: "line 4: unexpected"},
		{name: "too long", in: strings.Repeat("x", maxStubStatusBytes+1), wantErr: "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStubStatus(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzParseStubStatus: whatever the page holds, the parser returns a status or an error;
// a parsed status printed back in nginx's format parses to itself.
func FuzzParseStubStatus(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata: %v", err)
	}
	for _, name := range seeds {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStubStatus(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		again, err := ParseStubStatus(strings.NewReader(format(s)))
		if err != nil || again != s {
			t.Fatalf("%+v printed as nginx does parses to %+v, %v", s, again, err)
		}
	})
}
