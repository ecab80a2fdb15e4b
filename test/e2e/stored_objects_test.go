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

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/example/nginx-operator/pkg/apis/operator/install"
)

// embeddedEtcdURL matches the line our apiserver logs when its embedded etcd is up; the
// etcd listens on a free loopback port chosen at start-up.
var embeddedEtcdURL = regexp.MustCompile(`Started embedded etcd.* url="(http://[^"]+)"`)

// embeddedEtcd connects to the embedded etcd of the apiserver whose log is logFile, as
// the latest start of that apiserver logged it.
func embeddedEtcd(t *testing.T, logFile string) *clientv3.Client {
	t.Helper()
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	matches := embeddedEtcdURL.FindAllSubmatch(log, -1)
	if len(matches) == 0 {
		t.Fatalf("no embedded etcd URL in %s", filepath.Base(logFile))
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{string(matches[len(matches)-1][1])}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// storedNginxOperators returns the raw etcd values of the NginxOperators in namespace
// by key; keyPrefix is the apiserver's key prefix for the resource.
func storedNginxOperators(t *testing.T, etcd *clientv3.Client, keyPrefix, namespace string) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := etcd.Get(ctx, keyPrefix+namespace+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	values := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		values[string(kv.Key)] = kv.Value
	}
	return values
}

// storageDecoder decodes stored NginxOperators in any served version and encoding.
var storageDecoder = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return serializer.NewCodecFactory(scheme).UniversalDeserializer()
}()

// protobufPrefix starts every value the Kubernetes protobuf serializer writes.
var protobufPrefix = []byte("k8s\x00")

// storedEncoding describes a raw etcd value as "<encoding> <apiVersion>", e.g.
// "json operator.example.com/v1alpha1", and returns the decoded object.
func storedEncoding(t *testing.T, value []byte) (string, runtime.Object) {
	t.Helper()
	encoding := "unknown"
	switch {
	case bytes.HasPrefix(value, protobufPrefix):
		encoding = "protobuf"
	case bytes.HasPrefix(bytes.TrimSpace(value), []byte("{")):
		encoding = "json"
	}
	obj, gvk, err := storageDecoder.Decode(value, nil, nil)
	if err != nil {
		t.Fatalf("stored value (%s) does not decode: %v", encoding, err)
	}
	return encoding + " " + gvk.GroupVersion().String(), obj
}

// encodingCounts counts the values by storedEncoding, for the test's log.
func encodingCounts(t *testing.T, values map[string][]byte) string {
	t.Helper()
	counts := map[string]int{}
	for _, value := range values {
		encoding, _ := storedEncoding(t, value)
		counts[encoding]++
	}
	parts := make([]string, 0, len(counts))
	for encoding, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, encoding))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
