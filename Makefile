# nginx-operator: aggregated API server + controller for NginxOperator.
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin
LOCAL := .local

.PHONY: all build generate verify test test-unit test-integration run clean

all: build

build: ## Build bin/apiserver
	$(GO) build -o $(BIN)/apiserver ./cmd/apiserver

generate: ## Regenerate deepcopy, conversion, defaults, openapi, clients
	./hack/update-codegen.sh

verify: ## Fail if generated code is stale, code is not gofmt'ed, or go vet complains
	./hack/verify-codegen.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: ## Unit and integration tests (the CI test command)
	$(GO) test -count=1 -timeout 20m ./...

run: build ## Run the standalone apiserver on embedded etcd under .local/
	@mkdir -p $(LOCAL)
	@echo "Try: KUBECONFIG=$(LOCAL)/apiserver/kubeconfig kubectl get nginxoperators -A"
	$(BIN)/apiserver --standalone --data-dir $(LOCAL)/apiserver --secure-port 8443 --bind-address 127.0.0.1

clean:
	rm -rf $(BIN) $(LOCAL)
