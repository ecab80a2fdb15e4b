#!/usr/bin/env bash
# gotest.sh <module> [go test flags] <packages...>: go test, with each package's test binary
# kept in _output/test-bin/tests/ between runs.
#
# go test links every package's test binary again on every run, even when nothing changed;
# `go test -c -o` skips the link when the binary it would write is current. So this builds
# the binaries with -c into a directory per module and build flags, then runs them as go
# test would: from the package's directory, up to -p (the CPUs) at a time, printing
# "ok <package> <time>" or the output and "FAIL <package> <time>", and a single package's
# output as it comes. The flags are go test's: -count, -timeout, -parallel, -run, -skip,
# -short and -v go to the test binaries; -c builds them only; every other flag builds them.
# GOTEST_BIN_DIR moves the kept binaries elsewhere.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
root="${PWD}"
module="$1"
shift

build_flags=() key_flags=() run_flags=(-test.paniconexit0) packages=() verbose="" jobs="$(nproc)" build_only=""
while (($# > 0)); do
  arg="$1"
  shift
  case "${arg}" in
    -count | -timeout | -parallel | -run | -skip) run_flags+=("-test.${arg#-}=$1") && shift ;;
    -count=* | -timeout=* | -parallel=* | -run=* | -skip=*) run_flags+=("-test.${arg#-}") ;;
    -short) run_flags+=(-test.short) ;;
    -v) run_flags+=(-test.v) verbose=1 ;;
    -c) build_only=1 ;;
    -p) jobs="$1" && shift ;;
    -p=*) jobs="${arg#-p=}" ;;
    -x) build_flags+=(-x) ;;
    -*) build_flags+=("${arg}") key_flags+=("${arg}") ;;
    *) packages+=("${arg}") ;;
  esac
done

# go test's own default; a test binary run alone has none.
[[ " ${run_flags[*]} " == *" -test.timeout="* ]] || run_flags+=(-test.timeout=10m)

# One directory per module and build flags (and CGO_ENABLED, which changes the build; not
# -x, which only prints go's commands), so that suites built differently do not relink each
# other's binaries.
key="$(printf '%s ' "${module}" "${key_flags[@]}" "CGO_ENABLED=${CGO_ENABLED:-}" | sha256sum | cut -c1-12)"
bin_dir="${GOTEST_BIN_DIR:-${root}/_output/test-bin/tests}/${key}"
mkdir -p "${bin_dir}"

# The packages with tests, with their directories. go test -c -o DIR/ names a binary after
# the package's last element, so packages that share one (cmd/controller, pkg/controller)
# go to different batches, each built by one go command.
declare -a pkgs=() dirs=() batches=()
declare -A taken=()
listed="$("${GO}" -C "${module}" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "${packages[@]}")" || exit 1
while read -r pkg dir; do
  [[ -n "${pkg}" ]] || continue
  base="${pkg##*/}" batch=0
  while [[ -n "${taken[${batch}/${base}]:-}" ]]; do batch=$((batch + 1)); done
  taken[${batch}/${base}]=1
  pkgs+=("${pkg}") dirs+=("${dir}") batches+=("${batch}")
done <<<"${listed}"
if ((${#pkgs[@]} == 0)); then
  printf '?   \t%s\t[no test files]\n' "${packages[@]}"
  exit 0
fi

failed=0
declare -A unbuilt=()
for batch in $(printf '%s\n' "${batches[@]}" | sort -un); do
  members=()
  for i in "${!pkgs[@]}"; do [[ "${batches[$i]}" == "${batch}" ]] && members+=("${pkgs[$i]}"); done
  mkdir -p "${bin_dir}/${batch}"
  if ! "${GO}" -C "${module}" test "${build_flags[@]}" -c -o "${bin_dir}/${batch}/" "${members[@]}"; then
    # A package that does not build leaves the others built; find it by building each alone,
    # so an older binary of it is never run.
    for pkg in "${members[@]}"; do
      if ! "${GO}" -C "${module}" test "${build_flags[@]}" -c -o "${bin_dir}/${batch}/" "${pkg}" >/dev/null 2>&1; then
        unbuilt[${pkg}]=1
        printf 'FAIL\t%s [build failed]\n' "${pkg}"
        failed=1
      fi
    done
  fi
done

if [[ -n "${build_only}" ]]; then
  exit "${failed}"
fi

# run <index>: runs one package's binary from its directory, as go test does: its output
# shown when it fails or with -v, streamed when it is the only package and -v is given.
run() {
  local i="$1" pkg="${pkgs[$1]}" start=${EPOCHREALTIME} rc=0 out took
  local binary="${bin_dir}/${batches[$i]}/${pkg##*/}.test"
  out="$(mktemp)"
  if [[ -n "${verbose}" ]] && ((${#pkgs[@]} == 1)); then
    (cd "${dirs[$i]}" && "${binary}" "${run_flags[@]}") 2>&1 | tee "${out}"
    rc=${PIPESTATUS[0]}
    : >"${out}"
  else
    (cd "${dirs[$i]}" && "${binary}" "${run_flags[@]}") >"${out}" 2>&1 || rc=$?
    ((rc != 0)) || [[ -n "${verbose}" ]] || : >"${out}"
  fi
  took="$(awk -v a="${start}" -v b="${EPOCHREALTIME}" 'BEGIN { printf "%.3f", b - a }')"
  if ((rc == 0)); then
    printf 'ok  \t%s\t%ss\n' "${pkg}" "${took}" >>"${out}"
  else
    printf 'FAIL\t%s\t%ss\n' "${pkg}" "${took}" >>"${out}"
  fi
  # One write per package, so that packages running side by side do not interleave.
  cat "${out}"
  rm -f "${out}"
  return "${rc}"
}

running=0
for i in "${!pkgs[@]}"; do
  [[ -z "${unbuilt[${pkgs[$i]}]:-}" ]] || continue
  if ((running >= jobs)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run "${i}" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
((failed)) && echo FAIL
exit "${failed}"
