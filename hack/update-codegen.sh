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

kube::codegen::gen_helpers \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"

# Deprecation warnings for v1alpha1 come from these lifecycle methods.
go run k8s.io/code-generator/cmd/prerelease-lifecycle-gen \
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

kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --applyconfig-openapi-schema <(go run "${THIS_PKG}/hack/models-schema") \
    --output-dir "${SCRIPT_ROOT}/pkg/generated" \
    --output-pkg "${THIS_PKG}/pkg/generated" \
    --boilerplate "${BOILERPLATE}" \
    "${SCRIPT_ROOT}/pkg/apis"

# The v1alpha2 API as a CRD in another group, for make bench; needs the OpenAPI above.
go run ./hack/crd-from-openapi > "${SCRIPT_ROOT}/artifacts/bench/crd-nginxoperators.yaml"
