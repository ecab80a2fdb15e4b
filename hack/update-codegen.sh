#!/usr/bin/env bash
# Regenerates every zz_generated file and pkg/generated from the API types.
set -o errexit
set -o nounset
set -o pipefail

SCRIPT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${SCRIPT_ROOT}"
source "${SCRIPT_ROOT}/hack/lib-codegen.sh"
CODEGEN_PKG="$(codegen_dir)"
THIS_PKG="github.com/example/nginx-operator"
BOILERPLATE="${SCRIPT_ROOT}/hack/boilerplate.go.txt"

source "${CODEGEN_PKG}/kube_codegen.sh"
# openapi-gen would otherwise rewrite these --extra-pkgs' zz_generated.model_name.go with
# our boilerplate inside the Go module cache (go mod verify then reports k8s.io/api as
# modified); read-only packages are read, never written.
KUBE_CODEGEN_READONLY_PKGS+=(k8s.io/api/core/v1 k8s.io/api/autoscaling/v1)
require_protoc

kube::codegen::gen_helpers \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"

# Deprecation warnings for v1alpha1 come from these lifecycle methods. Built from the hack
# module (it pins the generator), run here, where the product's packages are.
GEN_BIN="$(mktemp -d)"
trap 'rm -rf "${GEN_BIN}"' EXIT
go -C "${SCRIPT_ROOT}/hack" build -o "${GEN_BIN}/prerelease-lifecycle-gen" k8s.io/code-generator/cmd/prerelease-lifecycle-gen
"${GEN_BIN}/prerelease-lifecycle-gen" \
    --go-header-file "${BOILERPLATE}" \
    --output-file zz_generated.prerelease-lifecycle.go \
    "${THIS_PKG}/pkg/apis/operator/v1alpha1"

# Every violation in this list was reviewed (docs/development.md, "OpenAPI rule violations").
# UPDATE_API_KNOWN_VIOLATIONS=true rewrites it after a reviewed change.
kube::codegen::gen_openapi \
    --output-dir "${SCRIPT_ROOT}/pkg/generated/openapi" \
    --output-pkg "${THIS_PKG}/pkg/generated/openapi" \
    --extra-pkgs k8s.io/api/core/v1 \
    --extra-pkgs k8s.io/api/autoscaling/v1 \
    --extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
    --report-filename "${SCRIPT_ROOT}/hack/api-rule-violations.list" \
    --output-model-name-file "zz_generated.model_name.go" \
    ${UPDATE_API_KNOWN_VIOLATIONS:+--update-report} \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"

# client-gen, lister-gen, informer-gen and applyconfiguration-gen name the API by its
# directory, and the go command finds a directory only in its main modules: the API
# (pkg/apis) and the clients (pkg/generated) are modules of their own, so these generators
# run in a workspace of this module, those two, and the code generator, which
# kube_codegen.sh installs from its own directory.
hack_tool models-schema >"${GEN_BIN}/models-schema.json"
cat >"${GEN_BIN}/go.work" <<WORK
go $(go mod edit -json | sed -n 's/^[[:space:]]*"Go": "\(.*\)",$/\1/p')

use (
	${SCRIPT_ROOT}
	${SCRIPT_ROOT}/pkg/apis
	${SCRIPT_ROOT}/pkg/generated
	${CODEGEN_PKG}
)
WORK
GOWORK="${GEN_BIN}/go.work" kube::codegen::gen_client \
    --with-watch \
    --prefers-protobuf \
    --with-applyconfig \
    --applyconfig-openapi-schema "${GEN_BIN}/models-schema.json" \
    --output-dir "${SCRIPT_ROOT}/pkg/generated" \
    --output-pkg "${THIS_PKG}/pkg/generated" \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"

# Protobuf: generated.proto and generated.pb.go next to types.go, and protobuf struct tags
# written into types.go. kube_codegen.sh has no helper for it, so go-to-protobuf runs here.
# The generator and protoc see packages laid out by import path under one root (GOPATH
# style): this module, and the modules whose generated.proto ours import (core/v1, meta/v1,
# resource, intstr), linked in from the module cache. The '-' prefix makes those referenced,
# never regenerated. gogo.proto is only needed while generating; the result drops it.
CODEGEN_VERSION="$(basename "${CODEGEN_PKG}")"
CODEGEN_VERSION="${CODEGEN_VERSION#*@}"
GOGO_VERSION="$(sed -n 's/^[[:space:]]*github.com\/gogo\/protobuf \(v[^[:space:]]*\).*/\1/p' "${CODEGEN_PKG}/go.mod")"
PROTO_ROOT="$(mktemp -d)"
trap 'rm -rf "${PROTO_ROOT}" "${GEN_BIN}"' EXIT
# Built with the code generator's own go.mod (not this module's), so its gogo dependency
# stays out of go.mod; goimports is what go-to-protobuf calls on the generated Go.
GOBIN="${PROTO_ROOT}/bin" go install \
    "k8s.io/code-generator/cmd/go-to-protobuf@${CODEGEN_VERSION}" \
    "k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo@${CODEGEN_VERSION}"
GOBIN="${PROTO_ROOT}/bin" go install "golang.org/x/tools/cmd/goimports@$(go -C "${SCRIPT_ROOT}/hack" list -m -f '{{.Version}}' golang.org/x/tools)"
GOGO_DIR="$(module_dir github.com/gogo/protobuf "${GOGO_VERSION}")"
mkdir -p "${PROTO_ROOT}/src/github.com/example" "${PROTO_ROOT}/src/github.com/gogo" "${PROTO_ROOT}/src/k8s.io"
ln -s "${SCRIPT_ROOT}" "${PROTO_ROOT}/src/${THIS_PKG}"
ln -s "${GOGO_DIR}" "${PROTO_ROOT}/src/github.com/gogo/protobuf"
for module in k8s.io/api k8s.io/apimachinery; do
  ln -s "$(go list -m -f '{{.Dir}}' "${module}")" "${PROTO_ROOT}/src/${module}"
done

PATH="${PROTO_ROOT}/bin:${PATH}" go-to-protobuf \
    --go-header-file "${BOILERPLATE}" \
    --output-dir "${PROTO_ROOT}/src" \
    --proto-import "${GOGO_DIR}/protobuf" \
    --apimachinery-packages "-k8s.io/apimachinery/pkg/util/intstr,-k8s.io/apimachinery/pkg/api/resource,-k8s.io/apimachinery/pkg/runtime/schema,-k8s.io/apimachinery/pkg/runtime,-k8s.io/apimachinery/pkg/apis/meta/v1,-k8s.io/api/core/v1" \
    --packages "${THIS_PKG}/pkg/apis/operator/v1alpha1,${THIS_PKG}/pkg/apis/operator/v1alpha2"

# The v1alpha2 API as a CRD in another group, for make bench; needs the OpenAPI above.
hack_tool crd-from-openapi > "${SCRIPT_ROOT}/artifacts/bench/crd-nginxoperators.yaml"

# The static manifests of artifacts/ from the Helm chart (hack/update-manifests.sh says which).
"${SCRIPT_ROOT}/hack/update-manifests.sh"

# The OLM bundle (bundle/, make bundle): from artifacts/deploy, with the API descriptions above.
hack_tool bundle

# The pictures in docs/ from their graphviz sources.
"${SCRIPT_ROOT}/hack/update-diagrams.sh"
