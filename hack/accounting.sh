#!/usr/bin/env bash
# make accounting: runs make test's suites (hack/test.sh) under the kernel's process
# accounting and prints their CPU time by command, so that what a change to the tests costs
# or saves is counted, not guessed. Root only (accton). Every process of the machine is
# counted while it runs: run it on an otherwise idle machine, after a first make test (a
# warm run: tools built, Go's build cache full).
#
#   ACCOUNTING_DIR  where the accounting file and the report go (default _output/accounting)
#   ACCOUNTING_TOP  how many commands the report lists by name (default 25)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ "$(id -u)" == 0 ]] || { echo "make accounting needs root: the kernel's process accounting (accton)" >&2; exit 1; }
if ! command -v accton >/dev/null || ! command -v dump-acct >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q acct >/dev/null
fi
dir="${ACCOUNTING_DIR:-${PWD}/_output/accounting}"
top="${ACCOUNTING_TOP:-25}"
mkdir -p "${dir}"
file="${dir}/pacct"
: >"${file}"
accton "${file}" >/dev/null
trap 'accton off >/dev/null' EXIT
start=${SECONDS}
rc=0
./hack/test.sh || rc=$?
wall=$((SECONDS - start))
accton off >/dev/null
trap - EXIT

# dump-acct: command|version|user|system|elapsed|... with times in clock ticks.
ticks="$(getconf CLK_TCK)"
dump-acct "${file}" | awk -F'|' -v ticks="${ticks}" -v top="${top}" -v wall="${wall}" -v rc="${rc}" '
  { gsub(/ +$/, "", $1); cpu = ($3 + $4) / ticks; n[$1]++; c[$1] += cpu; total += cpu; procs++ }
  END {
    printf "make test (hack/test.sh) exit %d, wall %d s, %d processes, %.0f CPU-s\n", rc, wall, procs, total
    printf "%-16s %9s %9s %6s\n", "command", "processes", "CPU-s", "share"
    for (k in c) printf "%-16s %9d %9.1f %5.1f%%\n", k, n[k], c[k], 100 * c[k] / total | "sort -k3 -n -r | head -n " top
  }' | tee "${dir}/report.txt"
exit "${rc}"
