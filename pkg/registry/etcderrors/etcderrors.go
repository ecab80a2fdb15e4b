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

// Package etcderrors gives clients the API errors that say "try again" when etcd cannot
// serve for a moment: while a new leader is elected, a member restarts, or the quorum is
// lost. The storage layer passes etcd's errors through, and the handlers answer them as
// 500 InternalError, which no client retries (kube-apiserver does the same for its own
// resources). Here they become 504 Timeout when the request may still take effect, 503
// ServiceUnavailable when etcd refused to start it, and 429 when etcd is behind.
package etcderrors

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"

	"github.com/example/nginx-operator/pkg/registry/decorate"
)

// notAttempted are etcd's refusals of a request it did not start: no leader, or a cluster
// it judges unhealthy. Every other "unavailable" (a timeout, a leader change or a member
// stopping mid-request, a connection lost) leaves the outcome unknown: the write may still
// be committed.
var notAttempted = []error{rpctypes.ErrNoLeader, rpctypes.ErrUnhealthy}

// Translate returns the API error a client retries for an etcd error that means "not
// now", and err itself for every other error.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		return err
	}
	var code codes.Code
	var message string
	var etcdErr rpctypes.EtcdError
	if errors.As(err, &etcdErr) {
		code, message = etcdErr.Code(), etcdErr.Error()
	} else if s, ok := grpcstatus.FromError(err); ok {
		code, message = s.Code(), s.Message()
	} else {
		return err
	}
	switch {
	case code == codes.Unavailable && isOneOf(err, notAttempted):
		return apierrors.NewServiceUnavailable(fmt.Sprintf("etcd cannot serve requests now (%s)", message))
	case code == codes.Unavailable:
		return apierrors.NewTimeoutError(fmt.Sprintf("etcd did not finish the request (%s); it may still take effect", message), 0)
	case errors.Is(err, rpctypes.ErrTooManyRequests):
		return apierrors.NewTooManyRequests(fmt.Sprintf("etcd is behind on applying writes (%s)", message), 1)
	}
	return err
}

func isOneOf(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// RESTOptionsGetter wraps every storage that getter's options build with Translate.
func RESTOptionsGetter(getter generic.RESTOptionsGetter) generic.RESTOptionsGetter {
	return decorate.Storage(getter, Storage)
}

// Storage wraps s so that its errors pass through Translate.
func Storage(s storage.Interface) storage.Interface { return translating{s} }

type translating struct{ storage.Interface }

func (s translating) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return Translate(s.Interface.Create(ctx, key, obj, out, ttl))
}

func (s translating) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	return Translate(s.Interface.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts))
}

func (s translating) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	return w, Translate(err)
}

func (s translating) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	return Translate(s.Interface.Get(ctx, key, opts, objPtr))
}

func (s translating) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	return Translate(s.Interface.GetList(ctx, key, opts, listObj))
}

func (s translating) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	return Translate(s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject))
}

func (s translating) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	rv, err := s.Interface.GetCurrentResourceVersion(ctx)
	return rv, Translate(err)
}
