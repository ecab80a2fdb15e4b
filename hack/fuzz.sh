#!/usr/bin/env bash
# Runs every Go fuzz target of the product's modules (., pkg/apis, pkg/generated) for a bounded time, one at a time (go test -fuzz
# takes a single target per run). FUZZTIME sets the time per target (default 10s). A failing
# input is written to <package>/testdata/fuzz/<Target>/, where plain go test replays it.
# FUZZMINIMIZETIME bounds each minimization (default 2s; go test's own default of 60s lets
# a short run spend its time shrinking inputs that merely found new coverage).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}

# The targets are read from the test files, as go test finds them (a top-level
# func FuzzXxx(*testing.F)), rather than with go test -list, which would build and link each
# package's test binary once more only to list them.
FUZZ_FUNC='^func (Fuzz[[:alnum:]_]*)\([[:alnum:]_]+ \*testing\.F\)'
packages=() dirs=() targets=()
for module in . pkg/apis pkg/generated; do
  while read -r pkg dir files; do
    found=""
    for f in ${files}; do
      found+=" $(grep -oE "${FUZZ_FUNC}" "${dir}/${f}" | sed -E 's/^func (Fuzz[[:alnum:]_]*).*/\1/' | tr '\n' ' ' || true)"
    done
    if [[ -n "${found// /}" ]]; then
      packages+=("${pkg}") dirs+=("${dir}") targets+=("$(tr ' ' '\n' <<<"${found}" | grep . | sort | tr '\n' ' ')")
    fi
  done < <("${GO}" -C "${module}" list -f '{{.ImportPath}} {{.Dir}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' ./...)
done

# Each package's test binary is built once with the fuzzing instrumentation (go test -c
# -fuzz) and kept in _output/test-bin/fuzz/: go test -fuzz would link it again for every
# target and every run.
bin_dir="${PWD}/_output/test-bin/fuzz"
fuzz_cache="$("${GO}" env GOCACHE)/fuzz"
binaries=()
mkdir -p "${bin_dir}"
for i in "${!packages[@]}"; do
  binaries[i]="${bin_dir}/$(tr / _ <<<"${packages[$i]}").test"
  (cd "${dirs[$i]}" && "${GO}" test -c -fuzz . -o "${binaries[$i]}" .) || exit 1
done

failed=()
count=0
for i in "${!packages[@]}"; do
  pkg="${packages[$i]}" dir="${dirs[$i]}"
  for target in ${targets[$i]}; do
    count=$((count + 1))
    echo "=== FUZZ ${pkg} ${target} (${FUZZTIME})"
    corpus="${dir}/testdata/fuzz/${target}"
    before="$(ls "${corpus}" 2>/dev/null || true)"
    # From the package directory, so a failing input lands in its testdata/fuzz; with the
    # cache directory go test gives it, so the inputs found interesting stay between runs.
    if log=$(cd "${dir}" && "${binaries[$i]}" -test.paniconexit0 -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "${FUZZTIME}" \
      -test.fuzzminimizetime "${FUZZMINIMIZETIME}" -test.fuzzcachedir "${fuzz_cache}/${pkg}" 2>&1); then
      # The last progress line carries the executions go test counted.
      grep -E '^fuzz: elapsed' <<<"${log}" | tail -n 1 || true
      echo "--- PASS ${target}"
    elif [[ "$(ls "${corpus}" 2>/dev/null || true)" == "${before}" ]] &&
      grep -qx '    context deadline exceeded' <<<"${log}" && ! grep -q 'Failing input written' <<<"${log}"; then
      # Go 1.26's fuzzing coordinator can report the end of -fuzztime itself as a failure
      # when a worker is still running (golang/go#75804, fixed in Go 1.27): no input failed
      # and none was written.
      grep -E '^fuzz: elapsed' <<<"${log}" | tail -n 1 || true
      echo "--- PASS ${target} (its run ended in golang/go#75804, 'context deadline exceeded' with no failing input)"
    else
      echo "${log}"
      echo "--- FAIL ${target}"
      failed+=("${pkg} ${target}")
    fi
  done
done

if [[ ${count} -eq 0 ]]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz targets failed; their inputs are in testdata/fuzz/<Target>/:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "all ${count} fuzz targets passed, ${FUZZTIME} each"
