#!/usr/bin/env bash
# Fails when generated code, or a manifest rendered from the chart, differs from what
# hack/update-codegen.sh produces.
# Generates into a scratch copy so the working tree is never touched.
set -o errexit
set -o nounset
set -o pipefail

SCRIPT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "${SCRATCH}"' EXIT

tar -C "${SCRIPT_ROOT}" --exclude=./.git --exclude=./bin --exclude=./.local --exclude=./.local-standalone --exclude=./hack/tools/bin --exclude=./_output -cf - . | tar -C "${SCRATCH}" -xf -
# The scratch copy has no tools of its own: Helm comes from this checkout's cache.
TOOLS_BIN_DIR="${TOOLS_BIN_DIR:-${SCRIPT_ROOT}/hack/tools/bin}" "${SCRATCH}/hack/update-codegen.sh" >/dev/null

ret=0
for path in pkg hack/api-rule-violations.list artifacts charts bundle docs/request-path.svg; do
  diff -Naupr "${SCRIPT_ROOT}/${path}" "${SCRATCH}/${path}" || ret=1
done
if [[ ${ret} -ne 0 ]]; then
  echo "Generated code is stale: run 'make generate' and commit the result." >&2
  exit 1
fi
echo "Generated code is up to date."
