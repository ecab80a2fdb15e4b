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

package server

import (
	"errors"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	genericoptions "k8s.io/apiserver/pkg/server/options"
)

// Validate checks completed options: where the objects are stored, then every option
// group the library validates (server run and versions, etcd, serving, delegated
// authentication and authorization, audit, features, admission, egress selector,
// tracing). Groups that standalone mode switched off in Complete are nil and skipped.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.validateStorage()...)
	errs = append(errs, o.ServerRun.Validate()...)
	errs = append(errs, o.recommendedAsRun().Validate()...)
	return utilerrors.NewAggregate(errs)
}

// errNoStorage is what a server without a store says. The embedded etcd is a local
// convenience that must be asked for: a replica that fell back to it silently would
// keep its own, diverging copy of every object.
var errNoStorage = errors.New("no storage configured: set --etcd-servers to the etcd cluster that keeps this API's objects, " +
	"or set --data-dir to run an embedded single-member etcd for local development (not for production, never for more than one replica)")

func (o *Options) validateStorage() []error {
	var errs []error
	switch {
	case o.Standalone && o.DataDir == "":
		errs = append(errs, errors.New("--standalone requires --data-dir, which holds its PKI and kubeconfig (and the embedded etcd's data unless --etcd-servers is set)"))
	case o.usesEmbeddedEtcd() && o.DataDir == "":
		errs = append(errs, errNoStorage)
	case !o.usesEmbeddedEtcd() && o.DataDir != "" && !o.Standalone:
		errs = append(errs, errors.New("--data-dir is only used by an embedded etcd or --standalone; with --etcd-servers the objects are kept in that etcd: remove one of the two flags"))
	}
	return errs
}

// usesEmbeddedEtcd is true when no --etcd-servers are given; validateStorage makes sure
// --data-dir asked for it.
func (o *Options) usesEmbeddedEtcd() bool {
	return len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0
}

// recommendedAsRun is o.Recommended as Run will use it. An embedded etcd's address is
// only known once it has started, so a placeholder stands in for --etcd-servers and the
// library still validates the other etcd flags.
func (o *Options) recommendedAsRun() *genericoptions.RecommendedOptions {
	if !o.usesEmbeddedEtcd() {
		return o.Recommended
	}
	recommended := *o.Recommended
	etcd := *recommended.Etcd
	etcd.StorageConfig.Transport.ServerList = []string{"embedded"}
	recommended.Etcd = &etcd
	return &recommended
}
