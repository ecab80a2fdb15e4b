#!/usr/bin/env bash
# make accounting: runs make test's suites (hack/test.sh) under the kernel's process
# accounting and prints their CPU time by command, so that what a change to the tests costs
# or saves is counted, not guessed. Root only (accton). Every process of the machine is
# counted while it runs: run it on an otherwise idle machine, after a first make test (a
# warm run: tools built, Go's build cache full).
#
#   ACCOUNTING_DIR  where the accounting file and the report go (default _output/accounting)
#   ACCOUNTING_TOP  how many commands (and kubectl's forms) the report lists (default 25)
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
# The kubectl commands the tests still run (test/framework's Kubectl writes each one).
export KUBECTL_TRACE="${dir}/kubectl.txt"
: >"${KUBECTL_TRACE}"
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
# The kubectl commands by subcommand and the flags given (their values left out).
{
  echo
  echo "kubectl commands the tests ran: $(wc -l <"${KUBECTL_TRACE}"), by subcommand and flags"
  awk -v verbs="get create delete apply patch replace wait label annotate scale rollout auth logs exec describe explain api-resources api-versions config kustomize version top cp run expose set edit drain cordon uncordon taint certificate cluster-info proxy attach debug diff events plugin" '
    BEGIN { n = split(verbs, v, " "); for (i = 1; i <= n; i++) verb[v[i]] = 1 }
    { form = ""; flags = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^-/) { f = $i; sub(/=.*/, "", f); flags = flags " " f }
        else if (form == "" && ($i in verb)) { form = $i; if ((form == "create" || form == "rollout" || form == "auth") && $(i + 1) !~ /^-/) form = form " " $(i + 1) }
      }
      print (form == "" ? "?" : form) flags }' "${KUBECTL_TRACE}" | sort | uniq -c | sort -rn | head -n "${top}"
} | tee -a "${dir}/report.txt"
exit "${rc}"
