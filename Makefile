# nginx-operator: aggregated API server + controller for NginxOperator.
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin
LOCAL := .local

.PHONY: all build generate bundle verify tools test test-e2e test-faults up down run run-standalone clean

all: build

build: ## Build bin/apiserver and bin/controller
	$(GO) build -o $(BIN)/apiserver ./cmd/apiserver
	$(GO) build -o $(BIN)/controller ./cmd/controller

generate: ## Regenerate deepcopy, conversion, defaults, openapi, clients
	./hack/update-codegen.sh

bundle: ## The OLM bundle in bundle/ (ClusterServiceVersion, annotations, bundle.Dockerfile), generated from artifacts/deploy; make generate runs it too
	$(GO) run ./hack/bundle

verify: ## Fail if generated code is stale, code is not gofmt'ed, or go vet complains
	./hack/verify-codegen.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# As root (the only way to run a real node) also kubelet, kube-proxy and CoreDNS.
tools: ## Build the pinned etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (cached); as root also kubelet, kube-proxy and CoreDNS
	./hack/tools/build.sh $(if $(filter 0,$(shell id -u)),--node)

# The fault suite runs after the others, not beside them: it loads our apiserver on purpose
# and judges its health probes, which a concurrent control plane on the same cores would blur.
# Every step runs even when an earlier one fails; the target fails if any did.
test: tools ## Unit, integration, end-to-end and fault tests with the race detector, then a bounded fuzz run (the CI test command)
	@rc=0; \
	$(GO) test -race -count=1 -timeout 40m $$($(GO) list ./... | grep -v '/test/faults$$') || rc=1; \
	$(GO) test -race -count=1 -timeout 20m ./test/faults/... || rc=1; \
	./hack/fuzz.sh || rc=1; \
	exit $$rc

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME each (default 10s), one after another; a failing input lands in testdata/fuzz/
	./hack/fuzz.sh

test-e2e: tools ## End-to-end tests only: the kwok stack, and as root the real-node deployment
	$(GO) test -race -count=1 -timeout 30m -v ./test/e2e/... ./test/deploy/...

test-faults: tools ## Fault tests only (kill -9 under load, etcd restarts, replicas, overload), verbose; make test runs them too
	$(GO) test -race -count=1 -timeout 30m -v ./test/faults/...

up: ## Start the local control plane in the background (state in .local/); NODE=real (root) adds this machine as a real node instead of kwok's
	./hack/local-up.sh

down: ## Stop what 'make up' started and remove .local/
	./hack/local-down.sh

run: ## The whole system in the foreground with the samples applied; Ctrl-C stops it; NODE=real (root) runs it as pods on a real node
	./hack/local-run.sh

run-standalone: build ## Only the apiserver, standalone, on embedded etcd under .local-standalone/
	@echo "Try: KUBECONFIG=.local-standalone/kubeconfig kubectl get nginxoperators -A"
	$(BIN)/apiserver --standalone --data-dir .local-standalone --secure-port 8443 --bind-address 127.0.0.1

clean: down ## Stop the local stack, remove binaries and local state
	rm -rf $(BIN) $(LOCAL) .local-standalone _output

.PHONY: images
images: tools ## OCI images (operator, pause, etcd, nginx) as archives in _output/images/, built offline with buildah; IMAGES="nginx-operator" builds a subset
	./hack/images/build.sh $(IMAGES)

.PHONY: bench
bench: tools build ## Benchmarks on a private local stack: our API (direct and aggregated) against the same API as a CRD, then controller convergence; writes docs/benchmarks.{md,json,svg} (under 20 minutes; not part of make test). BENCH_FLAGS="-sizes 200,500 -convergence-n 100" for a quick run
	$(GO) run ./test/bench -out docs -profile _output/bench-profiles -command "make bench$(if $(BENCH_FLAGS), BENCH_FLAGS='$(BENCH_FLAGS)')" $(BENCH_FLAGS)
