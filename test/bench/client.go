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
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Client is one target spoken to in one format by several concurrent workers, each on
// its own connection.
type Client struct {
	Target  *Target
	Format  Format
	workers []*rest.RESTClient
	// plain asks for no compression: a client that reads a list as the server writes it.
	plain *rest.RESTClient
	// NotServed says why the format is not measured for this target ("" when served).
	NotServed string
}

// Key names the pair in logs and in the JSON: "aggregated/protobuf".
func (c *Client) Key() string { return c.Target.Name + "/" + c.Format.Name }

func newClient(localDir string, t *Target, f Format, workers int) (*Client, error) {
	c := &Client{Target: t, Format: f}
	cfg := t.restConfig(localDir, f)
	if !clientSupports(cfg, f) {
		c.NotServed = "no client encoding (a CRD client has no protobuf)"
		return c, nil
	}
	for range workers {
		rc, err := newRESTClient(cfg)
		if err != nil {
			return nil, err
		}
		c.workers = append(c.workers, rc)
	}
	plainCfg := rest.CopyConfig(cfg)
	plainCfg.DisableCompression = true
	var err error
	if c.plain, err = newRESTClient(plainCfg); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) request(w int, verb string) *rest.Request {
	return c.workers[w%len(c.workers)].Verb(verb).Namespace(c.Target.Namespace).Resource(c.Target.Resource)
}

// create posts the object and decodes the answer, as a real client does.
func (c *Client) create(ctx context.Context, w int, obj runtime.Object) error {
	return c.request(w, http.MethodPost).Body(obj).Do(ctx).Into(c.Target.newItem())
}

func (c *Client) get(ctx context.Context, w int, name string) (runtime.Object, error) {
	obj := c.Target.newItem()
	return obj, c.request(w, http.MethodGet).Name(name).Do(ctx).Into(obj)
}

func (c *Client) update(ctx context.Context, w int, obj runtime.Object) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	return c.request(w, http.MethodPut).Name(accessor.GetName()).Body(obj).Do(ctx).Into(c.Target.newItem())
}

func (c *Client) delete(ctx context.Context, w int, name string) error {
	return c.request(w, http.MethodDelete).Name(name).Do(ctx).Error()
}

// listPage is one list call: the body's length on the wire, the decoded item count,
// the continue token and the list's resourceVersion.
type listPage struct {
	Bytes           int
	Items           int
	Continue        string
	ResourceVersion string
}

func (c *Client) list(ctx context.Context, w int, opts metav1.ListOptions) (listPage, error) {
	return c.listWith(ctx, c.request(w, http.MethodGet), opts)
}

// listPlain lists without asking for gzip.
func (c *Client) listPlain(ctx context.Context, opts metav1.ListOptions) (listPage, error) {
	return c.listWith(ctx, c.plain.Get().Namespace(c.Target.Namespace).Resource(c.Target.Resource), opts)
}

func (c *Client) listWith(ctx context.Context, req *rest.Request, opts metav1.ListOptions) (listPage, error) {
	res := req.SpecificallyVersionedParams(&opts, scheme.ParameterCodec, schema.GroupVersion{Version: "v1"}).Do(ctx)
	raw, err := res.Raw()
	if err != nil {
		return listPage{}, err
	}
	list := c.Target.newList()
	if err := res.Into(list); err != nil {
		return listPage{}, err
	}
	accessor, err := meta.ListAccessor(list)
	if err != nil {
		return listPage{}, err
	}
	return listPage{Bytes: len(raw), Items: meta.LenList(list), Continue: accessor.GetContinue(), ResourceVersion: accessor.GetResourceVersion()}, nil
}

func (c *Client) watch(ctx context.Context, resourceVersion string) (watch.Interface, error) {
	return c.watchOn(ctx, 0, resourceVersion)
}

// watchOn watches on worker w's connection.
func (c *Client) watchOn(ctx context.Context, w int, resourceVersion string) (watch.Interface, error) {
	opts := metav1.ListOptions{Watch: true, ResourceVersion: resourceVersion}
	return c.request(w, http.MethodGet).SpecificallyVersionedParams(&opts, scheme.ParameterCodec, schema.GroupVersion{Version: "v1"}).Watch(ctx)
}

// probe lists and creates once in the format. A 406 or 415 marks the format as not
// served by the target; anything else unexpected is an error of the benchmark.
func (c *Client) probe(ctx context.Context) error {
	if c.NotServed != "" {
		return nil
	}
	if _, err := c.list(ctx, 0, metav1.ListOptions{Limit: 1}); err != nil {
		return c.notServed("list", err)
	}
	obj, err := c.Target.newObject("probe-" + c.Format.Name)
	if err != nil {
		return err
	}
	if err := c.create(ctx, 0, obj); err != nil {
		return c.notServed("create", err)
	}
	return c.delete(ctx, 0, "probe-"+c.Format.Name)
}

func (c *Client) notServed(what string, err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch code := status.Status().Code; code {
		case http.StatusNotAcceptable, http.StatusUnsupportedMediaType:
			c.NotServed = fmt.Sprintf("%s answered %d %s", what, code, http.StatusText(int(code)))
			return nil
		}
	}
	return fmt.Errorf("probing %s with %s: %w", c.Key(), what, err)
}
