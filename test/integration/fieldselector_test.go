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

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestFieldSelectors: lists and watches filter on spec.image, spec.service.type and
// status.readyReplicas in both versions, as a CRD's selectableFields would let them, and an
// unsupported field is a 400 naming the supported ones.
func TestFieldSelectors(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := groupClient(s, "v1alpha2")
	for name, spec := range map[string]string{
		"plain":    `{"image":"nginx:1.26"}`,
		"exposed":  `{"image":"nginx:1.26","service":{"type":"NodePort"}}`,
		"other":    `{"image":"nginx:1.27"}`,
		"balanced": `{"image":"nginx:1.27","service":{"type":"LoadBalancer"}}`,
	} {
		body := fmt.Sprintf(`{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":%q,"namespace":"default"},"spec":%s}`, name, spec)
		if _, err := applyNginxOperator(ctx, c, name, "", body, "test", false); err != nil {
			t.Fatal(err)
		}
	}

	// The names of the listed objects.
	list := func(version, selector string) ([]string, error) {
		// Result.Error, unlike DoRaw, decodes the Status with the server's message.
		result := groupClient(s, version).Get().Namespace(ns).Resource("nginxoperators").Param("fieldSelector", selector).Do(ctx)
		if err := result.Error(); err != nil {
			return nil, err
		}
		raw, _ := result.Raw()
		var out struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, err
		}
		var names []string
		for _, item := range out.Items {
			names = append(names, item.Metadata.Name)
		}
		return names, nil
	}
	for _, version := range []string{"v1alpha2", "v1alpha1"} {
		for selector, want := range map[string][]string{
			"spec.image=nginx:1.27":                            {"balanced", "other"},
			"spec.service.type=ClusterIP":                      {"other", "plain"},
			"spec.service.type!=ClusterIP":                     {"balanced", "exposed"},
			"spec.image=nginx:1.26,spec.service.type=NodePort": {"exposed"},
			"status.readyReplicas=0":                           {"balanced", "exposed", "other", "plain"},
			"metadata.name=plain":                              {"plain"},
		} {
			got, err := list(version, selector)
			slices.Sort(got)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("%s list with %s: %v %v, want %v", version, selector, got, err, want)
			}
		}
		_, err := list(version, "spec.replicas=2")
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "spec.image, spec.service.type, status.readyReplicas") {
			t.Errorf("%s list with an unsupported field: %v, want 400 naming the supported fields", version, err)
		}
	}

	// A watch with a selector sees an object enter and leave it as the field changes.
	w, err := s.Client.OperatorV1alpha2().NginxOperators(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "spec.image=nginx:1.28"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	patch := func(image string) {
		t.Helper()
		body := fmt.Sprintf(`{"apiVersion":"operator.example.com/v1alpha2","kind":"NginxOperator","metadata":{"name":"plain","namespace":"default"},"spec":{"image":%q}}`, image)
		if _, err := applyNginxOperator(ctx, c, "plain", "", body, "test", false); err != nil {
			t.Fatal(err)
		}
	}
	patch("nginx:1.28")
	patch("nginx:1.29")
	var events []string
	for len(events) < 2 {
		select {
		case e := <-w.ResultChan():
			if e.Type == watch.Bookmark {
				continue
			}
			events = append(events, string(e.Type))
		case <-ctx.Done():
			t.Fatalf("watch events so far %v, want ADDED then DELETED", events)
		}
	}
	if !slices.Equal(events, []string{"ADDED", "DELETED"}) {
		t.Errorf("watch with spec.image=nginx:1.28 saw %v, want the object to enter (ADDED) and leave (DELETED)", events)
	}
}
