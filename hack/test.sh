#!/usr/bin/env bash
# make test: every suite of the three modules in three lanes that run beside each other, then
# a summary with each step's result and time. Every step runs even when an earlier one failed;
# the exit code is non-zero if any did.
#
#   first       build    make build: the binaries every suite and local stack runs
#   lane node   deploy   the real-node deployment (test/deploy, root only): the longest
#                        suite, mostly waiting for pods, etcd members and scrapes; it builds
#                        the images (hack/images/build.sh) it runs
#   lane kwok   e2e      end-to-end on a private kwok stack (test/e2e)
#               faults   test/faults: loads our apiserver on purpose and judges its health
#                        probes, so it runs when only the real node is left beside it
#   lane units  product  go test -race of the product's modules: cmd/ and pkg/, with the
#                        API types (pkg/apis) and generated clients (pkg/generated)
#               suites   the other packages of test/: integration, manifests, docs, scripts, the
#                        framework's and the benchmark's own tests; and hack/release's
#               fuzz     every fuzz target for FUZZTIME (default 10s)
#               hack     the generators' and image builders' tests (module hack/): by then
#                        they find the images deploy built current (build.sh builds one at a
#                        time), and compile for arm64 only for the multi-arch index they test
#
# The race detector is on for the product's unit tests, integration (which runs the
# apiserver in-process) and the other suites without a stack. e2e, faults and deploy drive
# the product as separate binaries built without it, so there it would check only the
# tests' own code, for much of their CPU: they are built like the product instead (static,
# -trimpath), which also shares its compiled packages. Each lane's output is printed whole
# when the lane ends.
#
# The suites append what they measure (test/framework's Measure) to FIGURES_DIR, which a full
# run starts empty; a full run as root that passes adds each step's time and the total. make measurements writes
# them into docs/measurements.md.
#
# SUITE_TIMEOUT is go test's -timeout for every step: a guard against a hang, not a measure
# of speed. On a fresh 2-core machine the longest package took 23 minutes (e2e, beside the
# two other lanes); the image tests compile the product for two architectures inside their
# run, which go test counts. 45 minutes leaves room for a machine half as fast, and the
# three lanes still end inside CI's 90.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-45m}
# -trimpath: without it Go caches our packages' compilation under the
# checkout's path, so a fresh clone elsewhere (as CI makes) compiles them all again.
TEST_FLAGS=(-race -trimpath -count=1 -timeout "${SUITE_TIMEOUT}")
BLACK_BOX_FLAGS=(-trimpath -count=1 -timeout "${SUITE_TIMEOUT}")

results="$(mktemp -d)"
trap 'rm -rf "${results}"' EXIT
FIGURES_DIR=${FIGURES_DIR:-${PWD}/_output/figures}
[[ "${1:-}" == "--unit" ]] || rm -rf "${FIGURES_DIR}"
mkdir -p "${FIGURES_DIR}"
export FIGURES_DIR

step() { # step <name> <command...>: runs the command and records its result and time
  local name="$1" start=${SECONDS} rc=0
  shift
  echo "=== STEP ${name}: $*"
  "$@" || rc=$?
  echo "${rc} $((SECONDS - start))" >"${results}/${name}"
  echo "=== STEP ${name}: exit ${rc} after $((SECONDS - start))s"
}

# Every suite runs through hack/gotest.sh: go test, with the test binaries kept between runs
# (a second make test links no test binary whose package did not change).
gotest() { # gotest <module> <go test arguments...>
  GO="${GO}" ./hack/gotest.sh "$@"
}

suite() { # suite <packages...>: go test of packages of the module test/
  gotest test "${TEST_FLAGS[@]}" "$@"
}

black_box() { # black_box <go test arguments...>: a suite that drives the product's binaries
  CGO_ENABLED=0 gotest test "${BLACK_BOX_FLAGS[@]}" "$@"
}

product_tests() { # every package of the product's modules (the kubectl plugin's too), even when one fails
  local rc=0 module
  for module in . pkg/apis pkg/generated cmd/kubectl-nginx; do
    gotest "${module}" "${TEST_FLAGS[@]}" ./... || rc=1
  done
  return "${rc}"
}

node_lane() {
  step deploy black_box ./deploy/...
}

kwok_lane() {
  # -parallel: the e2e tests that run side by side mostly wait (caches, backoff), not compute.
  step e2e black_box -parallel 6 ./e2e/...
  step faults black_box ./faults/...
}

# other_suites: the packages of test/ that need no control plane, and the release tool's
# own tests (module hack/release).
other_suites() {
  local others rc=0
  mapfile -t others < <("${GO}" -C test list ./... | grep -Ev '/test/(deploy|e2e|faults)$')
  suite "${others[@]}" || rc=1
  gotest hack/release "${TEST_FLAGS[@]}" ./... || rc=1
  return "${rc}"
}

units_lane() {
  step product product_tests
  step suites other_suites
  step fuzz ./hack/fuzz.sh
  step hack gotest hack "${TEST_FLAGS[@]}" ./...
}

# --unit: the fast loop (make test-unit): the product's unit tests and the suites that need no
# control plane (integration, manifests, ...), side by side; no fuzzing, no stacks, no root.
lanes=(units kwok node)
summary=(product suites fuzz hack e2e faults deploy)
if [[ "${1:-}" == "--unit" ]]; then
  product_lane() { step product product_tests; }
  suites_lane() { step suites other_suites; }
  lanes=(product suites)
  summary=(product suites)
fi
# The product's binaries are built once, before the suites that run them: the local stacks'
# make build and test/framework's ProductBinary then find bin/ current (go build links
# nothing), and stamped builds and releases are kept in _output/ between runs.
if [[ "${1:-}" != "--unit" ]]; then
  step build make --no-print-directory build
  summary=(build "${summary[@]}")
fi
declare -A pids
for lane in "${lanes[@]}"; do
  "${lane}_lane" >"${results}/${lane}.log" 2>&1 &
  pids[${lane}]=$!
  echo "=== LANE ${lane} started"
done
# Print each lane's output as soon as it ends, so a failure shows without waiting for the rest.
while ((${#pids[@]} > 0)); do
  wait -n "${pids[@]}"
  for lane in "${!pids[@]}"; do
    if ! kill -0 "${pids[${lane}]}" 2>/dev/null; then
      echo
      echo "=== LANE ${lane} ended after ${SECONDS}s; its output:"
      cat "${results}/${lane}.log"
      unset "pids[${lane}]"
    fi
  done
done

echo
echo "=== summary (lanes ${lanes[*]} side by side; each step's own time)"
failed=0
for name in "${summary[@]}"; do
  rc="" took=0
  [[ -r "${results}/${name}" ]] && read -r rc took <"${results}/${name}"
  case "${rc}" in
    0) result=ok ;;
    "") result="FAIL (did not end)" failed=1 ;;
    *) result="FAIL (exit ${rc})" failed=1 ;;
  esac
  printf '%-8s %-20s %5ds\n' "${name}" "${result}" "${took}"
done
printf '%-8s %-20s %5ds\n' total "$( ((failed)) && echo FAIL || echo ok)" "${SECONDS}"
# The times of a whole run, every suite included (the real node's only as root), go to the
# figures; a failed run's do not.
if ((!failed)) && [[ "${1:-}" != "--unit" && "$(id -u)" == 0 ]]; then
  figure() { # figure <name> <seconds> <what>
    printf '{"group":"make-test","name":"%s","value":%d,"unit":"s","what":"%s","suite":"hack","test":"hack/test.sh","measured":"%s"}\n' \
      "$1" "$2" "$3" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"${FIGURES_DIR}/figures-test-sh.jsonl"
  }
  figure total "${SECONDS}" "make test's suites, three lanes side by side (not make deps and make tools before them)"
  for name in "${summary[@]}"; do
    read -r rc took <"${results}/${name}"
    figure "step-${name}" "${took}" "the step ${name} alone, beside the other lanes"
  done
fi
exit "${failed}"
