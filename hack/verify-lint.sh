#!/usr/bin/env bash
# Runs golangci-lint, with the configuration in .golangci.yml, over the Go modules of this
# repository: the product, pkg/apis, hack/, test/ and hack/release/. Not pkg/generated, whose
# files are all generated (the configuration excludes them), nor the tool modules under
# hack/tools, which hold only imports. golangci-lint is pinned in a module of its own,
# hack/tools/lint, and built the way hack/tools/build.sh builds the other tools: on first use,
# into $TOOLS_BIN_DIR (default hack/tools/bin), under its version, a digest of
# hack/tools/lint/go.sum and the Go version (a linter built with an older Go cannot read a
# newer standard library); later runs reuse it.
# Usage: hack/verify-lint.sh [golangci-lint run flags], e.g. --fix.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
GO=${GO:-go}
LINT_DIR="${ROOT}/hack/tools/lint"
BIN_DIR="${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}"

# Read from go.mod (`require M V`, or `M V` in a require block): `go list -m` would load the
# module graph.
VERSION="$(awk -v m=github.com/golangci/golangci-lint/v2 '$1 == m { print $2 } $1 == "require" && $2 == m { print $3 }' "${LINT_DIR}/go.mod")"
[[ -n "${VERSION}" ]] || { echo "no golangci-lint in ${LINT_DIR}/go.mod" >&2; exit 1; }
DIGEST="$(sha256sum <"${LINT_DIR}/go.sum" | cut -c1-12)"
LINT="${BIN_DIR}/golangci-lint-${VERSION}-${DIGEST}-$("${GO}" env GOVERSION)/golangci-lint"
if [[ ! -x "${LINT}" ]]; then
  mkdir -p "${BIN_DIR}"
  # One build at a time per cache, as in hack/tools/build.sh (same lock).
  exec 9>"${BIN_DIR}/.lock"
  flock 9
  if [[ ! -x "${LINT}" ]]; then
    start=${SECONDS}
    mkdir -p "$(dirname "${LINT}")"
    CGO_ENABLED=0 "${GO}" -C "${LINT_DIR}" build -trimpath -ldflags "-s -w -X main.version=${VERSION#v}" \
      -o "${LINT}.tmp" github.com/golangci/golangci-lint/v2/cmd/golangci-lint
    mv "${LINT}.tmp" "${LINT}"
    echo "built   ${LINT#"${BIN_DIR}/"} in $((SECONDS - start))s"
  fi
  exec 9>&-
fi

# Each module from its own directory, with the one configuration at the root.
ret=0
for module in . pkg/apis cmd/kubectl-nginx hack test hack/release; do
  start=${SECONDS}
  (cd "${ROOT}/${module}" && "${LINT}" run --config "${ROOT}/.golangci.yml" "$@" ./...) || ret=1
  echo "golangci-lint (${module}) $((SECONDS - start))s"
done
exit "${ret}"
