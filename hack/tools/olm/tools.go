//go:build tools

// Package tools pins OLM v0 (olm-operator), which the real-node test runs against the
// bundle. It has a module of its own: its Kubernetes libraries (v0.36) and its
// controller-runtime differ from the test cluster's and from the product's.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
)
