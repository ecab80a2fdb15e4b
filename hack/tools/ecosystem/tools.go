//go:build tools

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

// Package tools pins the other projects' components the tests run, in one module so that
// they build against one set of dependency versions: the packages they share (Kubernetes'
// libraries, controller-runtime, gRPC, OpenTelemetry, the Prometheus client) are compiled
// once for all of them. hack/tools/build.sh builds each command from here; cert-manager's
// is the small main in cert-manager/ (its own command modules are not on the module proxy).
package tools

import (
	_ "github.com/coredns/coredns"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader"
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "helm.sh/helm/v3/cmd/helm"
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/metrics-server/cmd/metrics-server"
)
