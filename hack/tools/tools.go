//go:build tools

// Package tools pins the binaries the local cluster and the end-to-end tests run: etcd with
// etcdctl and etcdutl (member operations, snapshots and restores), the control plane, and
// kubelet and kube-proxy for the optional real node. It is a separate module so the
// product's go.mod stays clean.
package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
