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

package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseDpkgStatus(t *testing.T) {
	status := `Package: libc6
Status: install ok installed
Architecture: amd64
Source: glibc (2.36-9)
Version: 2.36-9+deb12u10
Description: GNU C Library
 a continuation line, ignored

Package: removed
Status: deinstall ok config-files
Version: 1.0

Package: zlib1g
Architecture: arm64
Version: 1:1.2.13.dfsg-1
`
	got, err := parseDpkgStatus(strings.NewReader(status))
	if err != nil {
		t.Fatal(err)
	}
	want := []debPackage{
		{name: "libc6", version: "2.36-9+deb12u10", architecture: "amd64", source: "glibc"},
		{name: "zlib1g", version: "1:1.2.13.dfsg-1", architecture: "arm64"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseDpkgStatus(strings.NewReader("Package: x\nArchitecture: all\n")); err == nil {
		t.Error("a stanza without Version parsed")
	}
}
