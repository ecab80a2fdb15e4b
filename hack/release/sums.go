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
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// sumsFile lists every file of a release with its SHA-256 in sha256sum's format, so that
// `sha256sum -c SHA256SUMS` checks a release too; sumsSignature signs it. Neither can be
// listed in SHA256SUMS itself.
const sumsFile, sumsSignature = "SHA256SUMS", "SHA256SUMS.sig"

// releaseFiles returns the paths (slash-separated, relative to dir, sorted) of the
// release's regular files but those named in except.
func releaseFiles(dir string, except ...string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err == nil && !slices.Contains(except, filepath.ToSlash(rel)) {
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	sort.Strings(files)
	return files, err
}

func writeSums(dir string) error {
	files, err := releaseFiles(dir, sumsFile, sumsSignature)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, file := range files {
		sum, err := fileSHA256(filepath.Join(dir, file))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, file)
	}
	return os.WriteFile(filepath.Join(dir, sumsFile), []byte(b.String()), 0o644)
}

// checkSums returns a problem for each file whose SHA-256 differs from SHA256SUMS, that
// SHA256SUMS lists but is missing, or that is in the release without being listed.
func checkSums(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, sumsFile))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	listed := map[string]string{}
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		sum, file, ok := strings.Cut(scanner.Text(), "  ")
		if !ok || len(sum) != 64 || file == "" {
			return nil, fmt.Errorf("%s:%d: not a line of sha256sum: %q", sumsFile, line, scanner.Text())
		}
		if _, dup := listed[file]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", sumsFile, line, file)
		}
		listed[file] = sum
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	files, err := releaseFiles(dir, sumsFile, sumsSignature)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, file := range files {
		want, ok := listed[file]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: in the release but not in %s", file, sumsFile))
			continue
		}
		delete(listed, file)
		got, err := fileSHA256(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		if got != want {
			problems = append(problems, fmt.Sprintf("%s: SHA-256 %s, %s says %s", file, got, sumsFile, want))
		}
	}
	for file := range listed {
		problems = append(problems, fmt.Sprintf("%s: listed in %s but missing", file, sumsFile))
	}
	sort.Strings(problems)
	return problems, nil
}

func fileSHA256(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
