#!/usr/bin/env bash
# make test: every suite of the three modules, in an order that keeps them from blurring each
# other, then a summary with each step's result and time. Every step runs even when an
# earlier one failed; the exit code is non-zero if any did.
#   product   go test -race of the product's modules: cmd/ and pkg/, with the API types
#             (pkg/apis) and generated clients (pkg/generated), which are modules of their own
#   hack      the generators' and image builders' tests (module hack/)
#   suites    integration, end-to-end (kwok stack) and, as root, the real-node deployment (module test/)
#   faults    test/faults alone: it loads our apiserver on purpose and judges its health
#             probes, which a concurrent control plane on the same cores would blur
#   fuzz      every fuzz target for FUZZTIME (default 10s)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
TEST_FLAGS=(-race -count=1)

names=() results=() times=()
step() { # step <name> <command...>
  local name="$1" start=${SECONDS} rc=0
  shift
  echo "=== STEP ${name}: $*"
  "$@" || rc=$?
  names+=("${name}") times+=($((SECONDS - start)))
  if ((rc == 0)); then results+=(ok); else results+=("FAIL (exit ${rc})"); fi
}

product_tests() { # every package of the three product modules, even when one fails
  local rc=0 module
  for module in . pkg/apis pkg/generated; do
    "${GO}" -C "${module}" test "${TEST_FLAGS[@]}" -timeout 20m ./... || rc=1
  done
  return "${rc}"
}
step product product_tests
step hack "${GO}" -C hack test "${TEST_FLAGS[@]}" -timeout 20m ./...
mapfile -t suites < <("${GO}" -C test list ./... | grep -v '/test/faults$')
step suites "${GO}" -C test test "${TEST_FLAGS[@]}" -timeout 40m "${suites[@]}"
step faults "${GO}" -C test test "${TEST_FLAGS[@]}" -timeout 20m ./faults/...
step fuzz ./hack/fuzz.sh

echo
echo "=== make test summary"
failed=0
for i in "${!names[@]}"; do
  printf '%-8s %-16s %5ds\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
  [[ "${results[$i]}" == ok ]] || failed=1
done
printf '%-8s %-16s %5ds\n' total "$( ((failed)) && echo FAIL || echo ok)" "${SECONDS}"
exit "${failed}"
