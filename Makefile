# nginx-operator: aggregated API server + controller for NginxOperator.
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin
LOCAL := .local

.PHONY: all build generate bundle verify deps tools test test-e2e test-faults up down run run-standalone clean release verify-release

all: build

# Every build of the product (this, make up, the tests' and the images') and go vet use the
# same settings, static and -trimpath, so that they share compiled packages.
PRODUCT_BUILD := CGO_ENABLED=0 $(GO) build -trimpath

build: ## Build bin/apiserver, bin/controller and the kubectl plugin bin/kubectl-nginx
	$(PRODUCT_BUILD) -o $(BIN)/apiserver ./cmd/apiserver
	$(PRODUCT_BUILD) -o $(BIN)/controller ./cmd/controller
	CGO_ENABLED=0 $(GO) -C cmd/kubectl-nginx build -trimpath -o $(abspath $(BIN))/kubectl-nginx .

generate: ## Regenerate deepcopy, conversion, defaults, openapi, clients
	./hack/update-codegen.sh

bundle: ## The OLM bundle in bundle/ (ClusterServiceVersion, annotations, bundle.Dockerfile), generated from artifacts/deploy; make generate runs it too
	$(GO) -C hack build -o $(CURDIR)/$(BIN)/bundle ./bundle
	$(BIN)/bundle

# Go modules: the product (.), its API types (pkg/apis) and generated clients (pkg/generated),
# which clients import without the servers' dependencies, its generators and image builders
# (hack/) and its test suites (test/); hack/tools builds the test cluster's Kubernetes binaries;
# hack/release cuts and checks releases, with dependencies (SPDX) the product does not have.
MODULES := . pkg/apis pkg/generated cmd/kubectl-nginx hack test hack/release

verify: ## Fail if generated code is stale, code is not gofmt'ed, go vet or golangci-lint (.golangci.yml; a test's time.Sleep included) complains, or the modules disagree on the product's dependencies
	./hack/verify-codegen.sh
	./hack/verify-modules.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do echo "go vet ($$m)"; CGO_ENABLED=0 $(GO) -C $$m vet -trimpath ./... || exit 1; done
	./hack/verify-lint.sh

# As root (the only way to run a real node) also kubelet, kube-proxy, CoreDNS and metrics-server.
tools: ## Build the pinned etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and Helm (cached); as root also kubelet, kube-proxy, CoreDNS, metrics-server, OLM's olm-operator, cert-manager, the Prometheus Operator and Prometheus, and what the real-node test cuts, signs and pushes a release with (cosign, distribution's registry, crane)
	./hack/tools/build.sh $(if $(filter 0,$(shell id -u)),--node)

deps: ## Install the Debian packages the build and tests need (root), or name the missing ones and what skips without them
	./hack/install-deps.sh

test: deps tools ## Unit, integration, end-to-end, real-node and fault tests (the race detector on every suite that runs the product in-process) in three lanes side by side, a bounded fuzz run, and a summary (the CI test command)
	./hack/test.sh

.PHONY: test-unit
test-unit: deps tools ## The fast loop: the product's unit tests and the suites that need no control plane (integration, manifests, docs, framework, scripts) side by side, with the race detector; no stacks, no root, no fuzzing
	./hack/test.sh --unit

.PHONY: accounting
accounting: deps tools ## make test's suites under the kernel's process accounting (root): CPU-seconds by command and the wall time, written to _output/accounting/report.txt; run it on an otherwise idle machine after a first make test
	./hack/accounting.sh

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME each (default 10s), one after another; a failing input lands in testdata/fuzz/
	./hack/fuzz.sh

# The test suites append the figures they measure (test/framework's Measure) here: make test
# starts it empty, make measurements turns it into docs/measurements.{md,json}.
FIGURES_DIR ?= $(CURDIR)/_output/figures
export FIGURES_DIR

# The suites that drive the product's binaries are built like them (hack/test.sh says why),
# their test binaries kept like make test's (hack/gotest.sh).
BLACK_BOX_TEST := CGO_ENABLED=0 GO=$(GO) ./hack/gotest.sh test -trimpath -count=1 -timeout 30m -v

test-e2e: deps tools ## End-to-end tests only: the kwok stack, and as root the real-node deployment
	$(BLACK_BOX_TEST) ./e2e/... ./deploy/...

test-faults: deps tools ## Fault tests only (kill -9 under load, etcd restarts, replicas, overload), verbose; make test runs them too
	$(BLACK_BOX_TEST) ./faults/...

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
images: tools ## OCI images (operator, pause, etcd, nginx) as archives in _output/images/, built offline with buildah; IMAGES="nginx-operator" builds a subset; PLATFORMS="linux/amd64 linux/arm64" adds multi-arch indexes of the operator and etcd images
	./hack/images/build.sh $(IMAGES)

release: ## Cut release VERSION=vX.Y.Z into _output/release/VERSION/: linux/amd64+arm64 images as OCI layouts with SPDX SBOMs, install.yaml, chart and OLM bundle pinned by digest, a size report, release.json, SHA256SUMS and cosign signatures. KEY=<cosign key> (password in COSIGN_PASSWORD; unset: a throwaway key pair), REGISTRY=<image prefix> (default example.com). Root (buildah); see docs/releasing.md
	VERSION='$(VERSION)' REGISTRY='$(REGISTRY)' KEY='$(KEY)' ./hack/release.sh

verify-release: ## Check a release offline: SHA256SUMS, cosign signatures, OCI layouts and their digests in release.json, install.yaml, chart and bundle, SBOMs. RELEASE_DIR=<dir> (default: the newest under _output/release), PUBLIC_KEY=<cosign.pub> (default: the release's own)
	PUBLIC_KEY='$(PUBLIC_KEY)' ./hack/verify-release.sh $(RELEASE_DIR)

.PHONY: measurements
measurements: ## Write docs/measurements.{md,json} from the figures the last make test (or make test-e2e, make test-faults) wrote to FIGURES_DIR; the figures of suites that did not run (the real node's, when not root) are kept as they were
	$(GO) -C test run ./measurements -figures '$(FIGURES_DIR)' -out $(CURDIR)/docs

.PHONY: bench
bench: tools build ## Benchmarks on private local stacks: our API (direct and aggregated) against the same API as a CRD at 1k, 10k and 50k objects, small objects, 1000 watchers, the cost of revisions at 10000 NginxOperators with 10 each, then controller convergence at 1000; writes docs/benchmarks.{md,json,svg}, keeping the 10000-object convergence of make bench-controller (under 30 minutes; not part of make test). BENCH_FLAGS="-sizes 200,500 -small-objects 200 -watchers 50 -revisions 500 -convergence-n 100" for a quick run; BENCH_FLAGS="-scenarios=false -convergence=false" measures revisions alone, keeping the rest
	$(GO) -C test run ./bench -repo $(CURDIR) -out $(CURDIR)/docs -profile $(CURDIR)/_output/bench-profiles -command "make bench$(if $(BENCH_FLAGS), BENCH_FLAGS='$(BENCH_FLAGS)')" $(BENCH_FLAGS)

.PHONY: bench-controller
bench-controller: tools build ## Controller convergence at 10000 NginxOperators against the cluster's own time for the same children, on kwok; merged into docs/benchmarks.{md,json} (about 20 minutes). BENCH_FLAGS="-convergence-n 1000" for a shorter run
	$(GO) -C test run ./bench -repo $(CURDIR) -out $(CURDIR)/docs -scenarios=false -convergence-n 10000 -command "make bench-controller$(if $(BENCH_FLAGS), BENCH_FLAGS='$(BENCH_FLAGS)')" $(BENCH_FLAGS)
