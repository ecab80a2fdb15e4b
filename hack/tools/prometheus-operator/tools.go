//go:build tools

// Package tools pins the Prometheus Operator, its config reloader and the Prometheus server
// its go.mod selects, which the real-node test runs against the prometheus overlay. It has
// a module of its own: their Kubernetes libraries (v0.36) and dependencies differ from the
// test cluster's and from the product's, and one module builds all three at versions the
// operator was built and tested with.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader"
	_ "github.com/prometheus/prometheus/cmd/prometheus"
)
