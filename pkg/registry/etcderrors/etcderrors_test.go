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

package etcderrors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

func TestTranslate(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		code   int32
		reason metav1.StatusReason
	}{
		{"a proposal that timed out may still be committed", rpctypes.ErrTimeout, http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
		{"a timeout after the leader failed", rpctypes.ErrTimeoutDueToLeaderFail, http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
		{"a leader change during the request", rpctypes.ErrLeaderChanged, http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
		{"a member stopping during the request", rpctypes.ErrStopped, http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
		{"wrapped by the storage layer", fmt.Errorf("txn failed: %w", rpctypes.ErrTimeout), http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
		{"no leader: not attempted", rpctypes.ErrNoLeader, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable},
		{"an unhealthy cluster", rpctypes.ErrUnhealthy, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable},
		{"a connection lost mid-request", grpcstatus.Error(codes.Unavailable, "error reading from server: EOF"), http.StatusGatewayTimeout, metav1.StatusReasonTimeout},
		{"etcd behind on applying writes", rpctypes.ErrTooManyRequests, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Translate(c.err)
			var status apierrors.APIStatus
			if !errors.As(got, &status) {
				t.Fatalf("Translate(%v) = %T %v, want an API status", c.err, got, got)
			}
			if s := status.Status(); s.Code != c.code || s.Reason != c.reason {
				t.Errorf("Translate(%v) = %d %s, want %d %s", c.err, s.Code, s.Reason, c.code, c.reason)
			}
			if etcdSaid := rpctypes.ErrorDesc(c.err); !strings.Contains(got.Error(), strings.TrimPrefix(etcdSaid, "txn failed: ")) {
				t.Errorf("message %q does not say what etcd said (%q)", got.Error(), etcdSaid)
			}
		})
	}
	for _, err := range []error{
		nil,
		apierrors.NewInvalid(schema.GroupKind{Kind: "NginxOperator"}, "x", nil),
		storage.NewKeyNotFoundError("/nginxoperators/ns/x", 0),
		rpctypes.ErrNoSpace, // an operator's problem, not one a retry solves
		context.Canceled,
		errors.New("decoding failed"),
	} {
		if got := Translate(err); got != err {
			t.Errorf("Translate(%v) = %v, want it unchanged", err, got)
		}
	}
}

// failing is a storage whose every call fails with err.
type failing struct {
	storage.Interface
	err error
}

func (f failing) Create(context.Context, string, runtime.Object, runtime.Object, uint64) error {
	return f.err
}

func (f failing) Get(context.Context, string, storage.GetOptions, runtime.Object) error { return f.err }

func (f failing) GuaranteedUpdate(context.Context, string, runtime.Object, bool, *storage.Preconditions, storage.UpdateFunc, runtime.Object) error {
	return f.err
}

func TestRESTOptionsGetterWrapsTheStorage(t *testing.T) {
	base := generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{},
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object,
			func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return failing{err: rpctypes.ErrTimeout}, func() {}, nil
		},
	}
	opts, err := RESTOptionsGetter(base).GetRESTOptions(schema.GroupResource{Resource: "nginxoperators"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := opts.Decorator(opts.StorageConfig, "/nginxoperators", nil, nil, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for verb, err := range map[string]error{
		"create": s.Create(ctx, "k", nil, nil, 0),
		"get":    s.Get(ctx, "k", storage.GetOptions{}, nil),
		"update": s.GuaranteedUpdate(ctx, "k", nil, false, nil, nil, nil),
	} {
		if !apierrors.IsTimeout(err) {
			t.Errorf("%s through the wrapped storage: %v, want 504 Timeout", verb, err)
		}
	}
}
